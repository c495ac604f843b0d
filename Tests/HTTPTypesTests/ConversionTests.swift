import HTTP1
@testable import HTTP2
import HTTPTypes
import Testing

/// HTTP/1.1 ⇄ HTTPTypes ⇄ HTTP/2: into the neutral types nothing changes; out of them the
/// translation rules of issue 15 apply (`:authority` ↔ `Host`, cookie crumbs joined, connection-
/// specific fields dropped, `te` only as `trailers`, CR/LF/NUL refused, a reason made up for h1).
@Suite struct ConversionTests {
    @Test func anHTTP1RequestMapsUnchanged() {
        let head = HTTPRequestHead(method: "POST", target: "/a?b", headers: ["Host": "x.test", "Connection": "close"])
        let request = HTTPRequest(head, scheme: "https", authority: "x.test", path: "/a?b")
        #expect(request.method == "POST")
        #expect(request.fields == HTTPFields([("Host", "x.test"), ("Connection", "close")]))
        #expect(request.pseudoHeaderFields.isEmpty)
        #expect(HTTPHeaders(request.fields) == head.headers)
    }

    @Test func anHTTP2RequestMapsUnchangedWithItsPseudoHeadersInOrder() {
        let block = HTTP2HeaderBlock(pseudo: [HTTP2Field(":method", "GET"), HTTP2Field(":path", "/p"),
                                              HTTP2Field(":scheme", "https"), HTTP2Field(":authority", "x.test:8443")],
                                     fields: [HTTP2Field("cookie", "a=1"), HTTP2Field("cookie", "b=2")])
        let request = HTTPRequest(block)
        #expect(request.method == "GET")
        #expect(request.scheme == "https")
        #expect(request.authority == "x.test:8443")
        #expect(request.path == "/p")
        #expect(request.fields == HTTPFields([("cookie", "a=1"), ("cookie", "b=2")]))
        #expect(request.pseudoHeaderFields.map(\.name) == [":method", ":path", ":scheme", ":authority"])
    }

    @Test func http2ToHTTP1TakesHostFromAuthorityAndJoinsCookies() throws {
        let block = HTTP2HeaderBlock.request(method: "GET", scheme: "https", authority: "x.test", path: "/p?q",
                                             fields: [HTTP2Field("cookie", "a=1"), HTTP2Field("accept", "*/*"),
                                                      HTTP2Field("cookie", "b=2"), HTTP2Field("te", "trailers")])
        let head = try HTTPRequestHead(forwarding: HTTPRequest(block))
        #expect(head.method == "GET")
        #expect(head.target == "/p?q")
        #expect(head.version == .http11)
        // Host first, as RFC 9110 §7.2 has a user agent send it.
        #expect(head.headers == HTTPHeaders([("Host", "x.test"), ("accept", "*/*"), ("cookie", "a=1; b=2")]))
    }

    @Test func http1ToHTTP2DropsConnectionSpecificFieldsAndHost() throws {
        let head = HTTPRequestHead(method: "POST", target: "/rpc", headers: [
            "Host": "x.test", "Connection": "Keep-Alive, X-Trace", "Keep-Alive": "timeout=5", "X-Trace": "1",
            "Transfer-Encoding": "chunked", "TE": "trailers", "Content-Type": "application/grpc", "Upgrade": "h2c",
        ])
        let request = HTTPRequest(head, scheme: "https", authority: "x.test", path: "/rpc")
        let block = try HTTP2HeaderBlock(forwarding: request)
        #expect(block.pseudo == [HTTP2Field(":method", "POST"), HTTP2Field(":scheme", "https"),
                                 HTTP2Field(":authority", "x.test"), HTTP2Field(":path", "/rpc")])
        #expect(block.fields == [HTTP2Field("te", "trailers"), HTTP2Field("content-type", "application/grpc")])
    }

    @Test func anotherTEThanTrailersIsDroppedForHTTP2() throws {
        let fields = try [HTTP2Field](forwarding: ["TE": "gzip", "Accept": "*/*"])
        #expect(fields == [HTTP2Field("accept", "*/*")])
    }

    @Test func anHTTP2ResponseGetsAReasonPhraseForHTTP1() throws {
        let block = HTTP2HeaderBlock.response(status: 404, fields: [HTTP2Field("content-length", "3"),
                                                                    HTTP2Field("set-cookie", "a=1")])
        let response = HTTPResponse(block)
        #expect(response.reason == nil)
        #expect(response.pseudoHeaderFields == HTTPFields([(":status", "404")]))
        let head = try HTTPResponseHead(forwarding: response)
        #expect(head.status == 404)
        #expect(head.reason == "Not Found")
        #expect(head.headers == HTTPHeaders([("content-length", "3"), ("set-cookie", "a=1")]))
    }

    @Test func anHTTP1ResponseLosesItsReasonAndHopFieldsForHTTP2() throws {
        let head = HTTPResponseHead(status: 200, reason: "Fine",
                                    headers: ["Connection": "close", "Content-Type": "text/plain"])
        let response = HTTPResponse(head)
        #expect(response.reasonPhrase == "Fine")
        let block = try HTTP2HeaderBlock(forwarding: response)
        #expect(block.status == 200)
        #expect(block.fields == [HTTP2Field("content-type", "text/plain")])
    }

    @Test func anHTTP2BlockRelayedToHTTP2KeepsItsPseudoHeaders() throws {
        let block = HTTP2HeaderBlock(pseudo: [HTTP2Field(":method", "CONNECT"), HTTP2Field(":protocol", "websocket"),
                                              HTTP2Field(":authority", "x.test")],
                                     fields: [HTTP2Field("host", "x.test"), HTTP2Field("x-a", "1")])
        let relayed = try block.forwarded()
        #expect(relayed.pseudo == block.pseudo)
        #expect(relayed.fields == [HTTP2Field("x-a", "1")])
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "a\u{0}"])
    func unsafeValuesAreRefusedInEveryDirection(_ value: String) {
        let h2 = HTTP2HeaderBlock.request(method: "GET", scheme: "https", authority: "x.test", path: "/",
                                          fields: [HTTP2Field("x-bad", value)])
        #expect(throws: HTTPFieldError(unsafeValueOf: "x-bad")) { try HTTPRequestHead(forwarding: HTTPRequest(h2)) }
        let h1 = HTTPRequestHead(method: "GET", target: "/", headers: ["X-Bad": value])
        #expect(throws: HTTPFieldError(unsafeValueOf: "X-Bad")) {
            try HTTP2HeaderBlock(forwarding: HTTPRequest(h1, scheme: "https", authority: "x.test", path: "/"))
        }
        #expect(throws: HTTPFieldError(unsafeValueOf: "x-bad")) {
            try HTTPHeaders(forwarding: HTTPFields([HTTP2Field("x-bad", value)]))
        }
    }

    @Test func trailersCrossBothWays() throws {
        let h1Trailers: HTTPHeaders = ["Grpc-Status": "0", "Connection": "close"]
        #expect(try [HTTP2Field](forwarding: HTTPFields(h1Trailers)) == [HTTP2Field("grpc-status", "0")])
        let h2Trailers = [HTTP2Field("grpc-status", "0"), HTTP2Field("grpc-message", "ok")]
        let forwarded = try HTTPHeaders(forwarding: HTTPFields(h2Trailers))
        #expect(forwarded == HTTPHeaders([("grpc-status", "0"), ("grpc-message", "ok")]))
    }
}

/// `HTTP2HeaderBlock.forwarded()` relays a block that needs no change without text round trips;
/// the result must be what the full rules give, whichever path it took.
@Suite struct HTTP2RelayFastPathTests {
    @Test(arguments: [
        [HTTP2Field("accept", "*/*"), HTTP2Field("x-a", "1\t2", neverIndex: true)],
        [HTTP2Field("Accept", "*/*")],
        [HTTP2Field("te", "trailers"), HTTP2Field("x-b", "2")],
        [HTTP2Field("host", "x.test"), HTTP2Field("x-b", "2")],
        [HTTP2Field("connection", "x-b"), HTTP2Field("x-b", "2")],
        [HTTP2Field("proxy-authorization", "Basic eA=="), HTTP2Field("content-encoding", "gzip")],
        [HTTP2Field(name: Array("x-bin".utf8), value: [0x66, 0xC3, 0x28])],
        [HTTP2Field("keep-alive", "5"), HTTP2Field("http2-settings", "AAMAAABkAAQAAP__"), HTTP2Field("x-b", "2")],
        [HTTP2Field("upgrade", "websocket"), HTTP2Field("transfer-encoding", "chunked"),
         HTTP2Field("proxy-connection", "keep-alive"), HTTP2Field("proxy-authenticate", "Basic")],
        // Values longer than a word: an HTAB inside is fine, a control byte or non-ASCII byte is not.
        [HTTP2Field("user-agent", "Mozilla/5.0 (X11; Linux x86_64)\tChrome/156.0")],
        [HTTP2Field(name: Array("x-ctl".utf8), value: Array("0123456789\u{1}abcdefghij".utf8))],
        [HTTP2Field(name: Array("x-del".utf8), value: Array("0123456789abcdef\u{7F}".utf8))],
        [HTTP2Field(name: Array("x-utf8".utf8), value: Array("0123456789abcdef caf\u{e9}".utf8))],
    ])
    func theFastPathAgreesWithTheRules(_ fields: [HTTP2Field]) throws {
        let block = HTTP2HeaderBlock(pseudo: [HTTP2Field(":status", "200")], fields: fields)
        let expected = try [HTTP2Field](forwarding: HTTPFields(fields))
        #expect(try block.forwarded().fields == expected)
    }

    @Test func aBlockFitToRelayTakesTheFastPath() {
        let fields = [HTTP2Field("accept", "*/*"), HTTP2Field("cookie", "a=1"), HTTP2Field("content-encoding", "br")]
        #expect(HTTP2HeaderBlock.forwardedUnchanged(fields) == fields)
        #expect(HTTP2HeaderBlock.forwardedUnchanged([HTTP2Field("x-a", "caf\u{e9}")]) == nil)
        #expect(HTTP2HeaderBlock.forwardedUnchanged([HTTP2Field("upgrade", "h2c")]) == nil)
        #expect(HTTP2HeaderBlock.forwardedUnchanged([HTTP2Field("proxy-authorization", "Basic eA==")]) == nil)
        #expect(HTTP2HeaderBlock.forwardedUnchanged([HTTP2Field("x-long", "0123456789abcdef\u{1}")]) == nil)
        #expect(HTTP2HeaderBlock.forwardedUnchanged([HTTP2Field("x-tab", "0123456789\tabcdef")])?.count == 1)
        #expect(HTTP2HeaderBlock.forwardedUnchanged([HTTP2Field("teapot", "1"), HTTP2Field("hosts", "2")])?.count == 2,
                "names that only start like a dropped one stay")
    }

    @Test func unsafeValuesAreStillRefused() {
        let block = HTTP2HeaderBlock(pseudo: [], fields: [HTTP2Field("x-a", "a\rb")])
        #expect(throws: HTTPFieldError(unsafeValueOf: "x-a")) { try block.forwarded() }
    }

    /// What the fast path relays is marked checked, so sending does not scan its fields again;
    /// only fields that pass every check of sending are, and any change to them clears the mark.
    @Test func onlyFieldsFitToSendAreMarkedChecked() throws {
        var relayed = try HTTP2HeaderBlock(pseudo: [HTTP2Field(":status", "200")],
                                           fields: [HTTP2Field("accept", "*/*"), HTTP2Field("x-a", "1\t2")]).forwarded()
        #expect(relayed.fieldsChecked)
        #expect(try relayed.checkedBlockForSending() == relayed)
        #expect(relayed == HTTP2HeaderBlock(pseudo: relayed.pseudo, fields: relayed.fields), "the mark is not part of the value")
        relayed.fields.append(HTTP2Field("x-b", " padded"))
        #expect(!relayed.fieldsChecked)
        #expect(throws: HTTP2Error.self) { try relayed.checkedBlockForSending() }
        // Fields sending refuses take the full path, unmarked, and are refused there as before.
        for field in [HTTP2Field("x-a", " lead"), HTTP2Field("x-a", "trail\t"), HTTP2Field("x:a", "1"),
                      HTTP2Field(name: [], value: Array("v".utf8))] {
            let block = try HTTP2HeaderBlock(pseudo: [HTTP2Field(":status", "200")], fields: [field]).forwarded()
            #expect(!block.fieldsChecked, "\(field)")
            #expect(throws: HTTP2Error.self) { try block.checkedBlockForSending() }
        }
    }
}
