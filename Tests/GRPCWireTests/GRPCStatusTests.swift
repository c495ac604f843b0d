import GRPCWire
import Testing

/// Status code names, `grpc-status` parsing and `grpc-message` percent-decoding.
@Suite struct GRPCStatusTests {
    @Test func codeNamesFollowStatuscodesMd() {
        #expect(GRPCStatus.names.count == 17)
        #expect(GRPCStatus.name(of: 0) == "OK")
        #expect(GRPCStatus.name(of: 1) == "CANCELLED")
        #expect(GRPCStatus.name(of: 5) == "NOT_FOUND")
        #expect(GRPCStatus.name(of: 14) == "UNAVAILABLE")
        #expect(GRPCStatus.name(of: 16) == "UNAUTHENTICATED")
        #expect(GRPCStatus.name(of: 17) == nil)
        #expect(GRPCStatus.name(of: -1) == nil)
    }

    @Test func statusHeaderIsDigitsOnly() {
        #expect(GRPCStatus.code(fromHeader: "0") == 0)
        #expect(GRPCStatus.code(fromHeader: " 14 ") == 14)
        #expect(GRPCStatus.code(fromHeader: "99") == 99)
        for bad in ["", "-1", "+1", "1.0", "0x1", "ok", "99999999999999999999999"] {
            #expect(GRPCStatus.code(fromHeader: bad) == nil, "\(bad)")
        }
    }

    /// PROTOCOL-HTTP2.md: percent-encoded UTF-8; broken escapes stay as they are.
    @Test(arguments: [
        ("", ""), ("hello", "hello"), ("not%20found", "not found"), ("a%25b", "a%b"),
        ("%E4%B8%96%E7%95%8C", "世界"), ("%c3%a9t%C3%A9", "été"), ("%", "%"), ("%4", "%4"), ("100%", "100%"),
        ("%zz", "%zz"), ("%%41", "%A"), ("%4g%41", "%4gA"), ("%FF", "\u{FFFD}"), ("line%0Abreak", "line\nbreak"),
        ("grüße", "grüße"),
    ])
    func messagesArePercentDecoded(_ pair: (String, String)) {
        #expect(GRPCStatus.decodeMessage(pair.0) == pair.1)
    }

    /// What the proxy sends in `grpc-message`: `%` and non-ASCII percent-encoded, the rest as is,
    /// and `decodeMessage` gives the text back.
    @Test(arguments: ["no such thing: 100% gone", "café ☕", "plain text", ""])
    func encodedMessagesDecodeBack(_ text: String) {
        let encoded = GRPCStatus.encodeMessage(text)
        #expect(encoded.utf8.allSatisfy { (0x20...0x7E).contains($0) })
        #expect(GRPCStatus.decodeMessage(encoded) == text)
    }

    @Test func encodingKeepsPrintableASCIIAndEscapesPercent() {
        #expect(GRPCStatus.encodeMessage("100% gone") == "100%25 gone")
        #expect(GRPCStatus.encodeMessage("é") == "%C3%A9")
    }

    /// `grpc-timeout` is 1 to 8 digits and a unit (PROTOCOL-HTTP2.md); anything else is no timeout.
    @Test(arguments: [
        ("477m", 0.477), ("20S", 20), ("2M", 120), ("1H", 3600), ("1500u", 0.0015), ("99999999n", 0.099999999),
        (" 5S ", 5), ("123456789S", nil), ("S", nil), ("5s", nil), ("-5S", nil), ("5 S", nil), ("", nil),
    ] as [(String, Double?)])
    func timeoutsAreReadAsPROTOCOLHTTP2MdWritesThem(_ pair: (String, Double?)) {
        let seconds = GRPCStatus.timeout(fromHeader: pair.0)
        #expect(seconds.map { abs($0 - (pair.1 ?? -1)) < 1e-12 } ?? (pair.1 == nil), "\(pair.0): \(String(describing: seconds))")
    }

    /// RST_STREAM codes map to the statuses PROTOCOL-HTTP2.md's "Errors" table gives.
    @Test(arguments: [("NO_ERROR", 13), ("PROTOCOL_ERROR", 13), ("INTERNAL_ERROR", 13), ("REFUSED_STREAM", 14),
                      ("CANCEL", 1), ("ENHANCE_YOUR_CALM", 8), ("INADEQUATE_SECURITY", 7), ("0x1f", 13)])
    func resetCodesMapAsPROTOCOLHTTP2MdSays(_ pair: (String, Int)) {
        #expect(GRPCStatus.code(forReset: pair.0) == pair.1)
    }
}
