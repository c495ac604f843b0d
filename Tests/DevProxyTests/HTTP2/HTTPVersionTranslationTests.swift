@testable import DevProxy
import HTTP2
import Testing

/// `HTTPVersionTranslation.relayedH2` passes a head's fields through untouched when the full
/// translation (`h2Fields`) would change none of them; its result must always be what `h2Fields`
/// gives.
@Suite struct HTTPVersionTranslationTests {
    @Test func relayedFieldsAreWhatTheFullTranslationGives() throws {
        let heads: [[HTTP2Field]] = [
            [HTTP2Field("content-type", "text/plain"), HTTP2Field("content-length", "100"), HTTP2Field("x-a", "a\tb")],
            [HTTP2Field("authorization", "secret", neverIndex: true), HTTP2Field("accept", "*/*")],
            [HTTP2Field("Content-Type", "text/plain")],
            [HTTP2Field("te", "trailers"), HTTP2Field("accept", "*/*")],
            [HTTP2Field("te", "gzip")],
            [HTTP2Field("connection", "x-drop"), HTTP2Field("x-drop", "1"), HTTP2Field("x-keep", "2")],
            [HTTP2Field("host", "example"), HTTP2Field("keep-alive", "5"), HTTP2Field("upgrade", "h2c")],
            [HTTP2Field("http2-settings", "AAA"), HTTP2Field("proxy-authorization", "x"), HTTP2Field("proxy-connection", "y")],
            [HTTP2Field("transfer-encoding", "chunked"), HTTP2Field("proxy-authenticate", "z")],
            [HTTP2Field(name: Array("x-bin".utf8), value: [0x66, 0xC3, 0xA9, 0xFF])],
            [HTTP2Field("x-unicode", "caf\u{e9}")],
            [],
        ]
        for fields in heads {
            let block = HTTP2HeaderBlock(pseudo: [HTTP2Field(":status", "200")], fields: fields)
            let relayed = try HTTPVersionTranslation.relayedH2(block)
            let full = try HTTPVersionTranslation.h2Fields(from: fields.map { ($0.nameString, $0.valueString) })
            #expect(relayed.fields == full, "\(fields)")
            #expect(relayed.pseudo == block.pseudo)
        }
        let unsafe = HTTP2HeaderBlock(pseudo: [], fields: [HTTP2Field(name: Array("x".utf8), value: [0x61, 0x0A, 0x62])])
        #expect(throws: HTTPVersionTranslation.UnsafeValue.self) { try HTTPVersionTranslation.relayedH2(unsafe) }
    }
}
