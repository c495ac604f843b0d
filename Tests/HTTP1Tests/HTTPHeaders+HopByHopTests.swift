import Testing
@testable import HTTP1

@Suite struct HTTPHeadersHopByHopTests {
    @Test func removesConnectionFieldsAndWhatConnectionNames() {
        var headers: HTTPHeaders = [
            "Host": "a", "Connection": "keep-alive, X-Secret", "Keep-Alive": "timeout=5", "X-Secret": "s",
            "Proxy-Connection": "keep-alive", "TE": "trailers", "Transfer-Encoding": "chunked", "Upgrade": "h2c",
            "Proxy-Authorization": "Basic x", "Proxy-Authenticate": "Basic", "Accept": "*/*", "x-secret": "t",
        ]
        headers.removeHopByHop()
        #expect(headers == ["Host": "a", "Accept": "*/*"])
    }

    /// Connection may not take away what frames or routes the message (RFC 9110 §7.6.1).
    @Test func connectionNeverRemovesContentLengthOrHost() {
        var headers: HTTPHeaders = ["Host": "a", "Connection": "content-length, HOST, X-Hop", "Content-Length": "5", "X-Hop": "1"]
        headers.removeHopByHop()
        #expect(headers == ["Host": "a", "Content-Length": "5"])
    }

    /// Equal Content-Length values (a list, or the field twice) go on as one value.
    @Test func equalContentLengthsBecomeOne() {
        var listed: HTTPHeaders = ["Host": "a", "Content-Length": "4, 4"]
        listed.collapseContentLength()
        #expect(listed == ["Host": "a", "Content-Length": "4"])
        var twice: HTTPHeaders = ["Content-Length": "4", "Host": "a", "content-length": "4"]
        twice.collapseContentLength()
        #expect(twice == ["Content-Length": "4", "Host": "a"])
        var single: HTTPHeaders = ["Content-Length": "4"]
        single.collapseContentLength()
        #expect(single == ["Content-Length": "4"])
    }

    @Test func relayingAnUpgradeKeepsUpgradeAndAMinimalConnection() {
        var headers: HTTPHeaders = [
            "Host": "a", "connection": "Upgrade, X-Hop", "Upgrade": "websocket", "X-Hop": "1",
            "Sec-WebSocket-Key": "k",
        ]
        headers.removeHopByHop(relayingUpgrade: true)
        #expect(headers == ["Host": "a", "Upgrade": "websocket", "Sec-WebSocket-Key": "k", "connection": "upgrade"])
    }

    /// `curl --http2 http://…` through the proxy asks the origin for h2c: never relayed (the
    /// origin answers over HTTP/1.1 and the exchange is recorded), HTTP2-Settings removed with it;
    /// another protocol offered beside it is still relayed.
    @Test func theH2CUpgradeIsNeverRelayed() {
        var curl: HTTPHeaders = [
            "Host": "a", "Accept": "*/*", "Connection": "Upgrade, HTTP2-Settings", "Upgrade": "h2c",
            "HTTP2-Settings": "AAMAAABkAAQCAAAAAAIAAAAA",
        ]
        curl.removeHopByHop(relayingUpgrade: true)
        #expect(curl == ["Host": "a", "Accept": "*/*"])
        var both: HTTPHeaders = ["Host": "a", "Connection": "upgrade", "Upgrade": "H2C, example/2", "X": "1"]
        both.removeHopByHop(relayingUpgrade: true)
        #expect(both == ["Host": "a", "X": "1", "Upgrade": "example/2", "Connection": "upgrade"])
    }

    @Test func relayingUpgradeWithoutAnUpgradeRequestStillRemovesUpgrade() {
        var headers: HTTPHeaders = ["Host": "a", "Upgrade": "websocket", "Connection": "close"]
        headers.removeHopByHop(relayingUpgrade: true)
        #expect(headers == ["Host": "a"])
    }

    @Test(arguments: [
        (HTTPVersion.http11, HTTPHeaders(), true),
        (.http11, ["Connection": "close"], false),
        (.http11, ["Connection": "Keep-Alive, CLOSE"], false),
        (.http11, ["Connection": "upgrade"], true),
        (.http10, HTTPHeaders(), false),
        (.http10, ["Connection": "Keep-Alive"], true),
        (.http10, ["connection": "keep-alive", "Connection": "close"], false),
    ] as [(HTTPVersion, HTTPHeaders, Bool)])
    func keepAliveFollowsVersionAndConnection(version: HTTPVersion, headers: HTTPHeaders, persistent: Bool) {
        #expect(HTTPHeaders.keepAlive(version: version, headers: headers) == persistent)
        #expect(HTTPRequestHead(method: "GET", target: "/", version: version, headers: headers).keepAlive == persistent)
        #expect(HTTPResponseHead(version: version, status: 200, reason: "OK", headers: headers).keepAlive == persistent)
    }

    @Test func expectsContinueIgnoresCaseAndOtherExpectations() {
        #expect((["Expect": "100-continue"] as HTTPHeaders).expectsContinue)
        #expect((["expect": "100-CONTINUE"] as HTTPHeaders).expectsContinue)
        #expect(!(["Expect": "200-ok"] as HTTPHeaders).expectsContinue)
        #expect(!HTTPHeaders().expectsContinue)
    }
}
