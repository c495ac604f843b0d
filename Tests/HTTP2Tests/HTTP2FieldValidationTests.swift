import Testing
@testable import HTTP2

/// Fields we send are lowercased and checked: what a peer would reject as malformed (RFC 9113
/// §8.2) is refused here with a reason, before any byte is queued.
@Suite struct HTTP2FieldValidationTests {
    @Test func namesAreLowercased() throws {
        let field = try HTTP2Field("Content-Type", "text/html").checkedForSending()
        #expect(field.nameString == "content-type")
        #expect(field.valueString == "text/html")
    }

    @Test(arguments: ["a\rb", "a\nb", "a\u{0}b", " lead", "trail\t"])
    func badValuesAreRefused(_ value: String) {
        let error = #expect(throws: HTTP2Error.self) { try HTTP2Field("x-a", value).checkedForSending() }
        #expect(error?.code == .invalidField)
    }

    @Test(arguments: ["", "a b", "a:b", ":", "caf\u{e9}", "a\r"])
    func badNamesAreRefused(_ name: String) {
        #expect(throws: HTTP2Error.self) { try HTTP2Field(name, "v").checkedForSending() }
    }

    @Test(arguments: ["connection", "Keep-Alive", "proxy-connection", "transfer-encoding", "upgrade"])
    func connectionSpecificFieldsAreRefused(_ name: String) {
        let error = #expect(throws: HTTP2Error.self) { try HTTP2Field(name, "x").checkedForSending() }
        #expect(error?.reason.contains("connection-specific") == true)
    }

    @Test func teIsOnlyAllowedAsTrailers() throws {
        _ = try HTTP2Field("te", "trailers").checkedForSending()
        #expect(throws: HTTP2Error.self) { try HTTP2Field("te", "gzip").checkedForSending() }
    }

    @Test func pseudoHeaderFieldsStayFirstAndOutOfTrailers() throws {
        let misplaced = HTTP2HeaderBlock(pseudo: [HTTP2Field("accept", "*/*")], fields: [])
        #expect(throws: HTTP2Error.self) { try misplaced.checkedForSending() }
        let late = HTTP2HeaderBlock(pseudo: [], fields: [HTTP2Field(":path", "/")])
        #expect(throws: HTTP2Error.self) { try late.checkedForSending() }
        let trailers = HTTP2HeaderBlock([HTTP2Field(":status", "200")])
        #expect(throws: HTTP2Error.self) { try trailers.checkedForSending(allowPseudo: false) }
    }

    /// A reverse listener's `:authority` rewrite: replaced where it stands, a repeat removed, added
    /// after the other pseudo-header fields when absent.
    @Test func setPseudoReplacesInPlaceOrAppends() {
        var block = HTTP2HeaderBlock.request(method: "GET", scheme: "http", authority: "127.0.0.1:9000", path: "/a",
                                             fields: [HTTP2Field("accept", "*/*")])
        block.pseudo.append(HTTP2Field(":authority", "again"))
        block.setPseudo(":authority", "origin.test:50051")
        #expect(block.pseudo.map(\.nameString) == [":method", ":scheme", ":authority", ":path"])
        #expect(block.authority == "origin.test:50051")
        #expect(block.fields == [HTTP2Field("accept", "*/*")])
        var bare = HTTP2HeaderBlock.request(method: "GET", scheme: "http", authority: nil, path: "/")
        bare.setPseudo(":authority", "origin.test")
        #expect(bare.pseudo.map(\.nameString) == [":method", ":scheme", ":path", ":authority"])
        #expect(bare.authority == "origin.test")
    }

    @Test func aBadFieldQueuesNothing() throws {
        let pair = try SessionPair()
        let head = HTTP2HeaderBlock.request(method: "GET", scheme: "https", authority: "x.test", path: "/",
                                            fields: [HTTP2Field("x-a", "1\r\nx-injected: 1")])
        #expect(throws: HTTP2Error.self) { try pair.client.submitRequest(head, endStream: true) }
        #expect(pair.client.pendingOutput().isEmpty)
    }

    @Test func errorCodesHaveTheirRFCNames() {
        #expect(HTTP2ErrorCode.refusedStream.description == "REFUSED_STREAM")
        #expect(HTTP2ErrorCode.http11Required.description == "HTTP_1_1_REQUIRED")
        #expect(HTTP2ErrorCode.noError.description == "NO_ERROR")
        #expect(HTTP2ErrorCode(rawValue: 0xff).description == "0xff")
        #expect(HTTP2ErrorCode.enhanceYourCalm.rawValue == 0xb)
    }

    @Test func defaultLimitsAreAsDocumented() {
        let limits = HTTP2Limits()
        #expect(limits.maxConcurrentStreams == 100)
        #expect(limits.maxHeaderListSize == 65_536)
        #expect(limits.maxFrameSize == 16_384)
        #expect(limits.initialWindowSize == 262_144)
        #expect(limits.connectionWindowSize == 2_097_152)
        #expect(limits.maxContinuations == 8)
        #expect(limits.streamResetBurst == 1000 && limits.streamResetRatePerSecond == 33)
        #expect(!limits.enablePush && !limits.keepClosedStreams)
    }
}
