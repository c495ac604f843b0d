@testable import SessionStore
import XCTest

/// The regex prefilter must never rule out a row the regex would match: every literal it finds
/// has to be in every match.
final class RequiredLiteralTests: XCTestCase {
    func testTheLongestRequiredRunIsFoundAndOptionalPartsAreNot() {
        let table: [(String, String?)] = [
            (#"needle-\d+5 "#, "needle-"),
            (#"^/items/\d*99\d$"#, "/items/"),
            (#"api\.Example\.com$"#, "api.example.com"),
            ("colou?r-scheme", "r-scheme"),
            ("abcd{2}xy", "abc"),
            ("ab(cdefgh)?ijk", "ijk"),
            ("[abcdef]+token", "token"),
            ("foo|barbaz", nil),
            ("a.b.c", nil),
            ("zzzz*", "zzz"),
            ("tokens+", "tokens"),
            ("ünïcode", nil),
        ]
        for (pattern, expected) in table {
            XCTAssertEqual(RequiredLiteral.of(pattern), expected, pattern)
        }
    }
}

/// The byte-level search that stands in for ICU on plain patterns must agree with ICU.
final class CaseFoldedLiteralTests: XCTestCase {
    func testPlainPatternsMatchAsTheRegexWould() throws {
        let patterns = ["api.example.com", "host7.example", "example\\.com", "LOGIN", "a.b", "-7", "x.", "needle-"]
        let subjects = ["API.Example.COM", "apiXexampleYcom", "host70.example.org", "host7.example", "example.com",
                        "exampleXcom", "/login?next=1", "aéb", "a\nb", "ab", "needle-7", "x", "xé", ""]
        for pattern in patterns {
            let regex = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            let literal = try XCTUnwrap(TextPattern.literal(pattern), pattern)
            for subject in subjects {
                let expected = regex.firstMatch(in: subject, range: NSRange(location: 0, length: subject.utf16.count)) != nil
                var text = subject
                let found = text.withUTF8 { literal.occurs(in: UnsafeRawBufferPointer($0)) }
                XCTAssertEqual(found, expected, "\(pattern) in \(subject.debugDescription)")
            }
        }
        XCTAssertNil(TextPattern.literal("a*b"))
        XCTAssertNil(TextPattern.literal(#"\d+"#))
    }
}
