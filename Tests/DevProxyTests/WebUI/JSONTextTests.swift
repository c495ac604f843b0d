import Foundation
import Testing
@testable import WebUI

/// `JSONText.quoted`: values that need no escape take a short path; the result must be the same
/// JSON string either way, and parse back to the value.
@Suite struct JSONTextTests {
    @Test func quotedEscapesWhatItMustAndParsesBack() throws {
        let cases: [(String, String)] = [
            ("https://api.example/v1?q=1", "\"https://api.example/v1?q=1\""),
            ("", "\"\""),
            ("caf\u{e9} \u{1F600}", "\"caf\u{e9} \u{1F600}\""),
            ("a\"b\\c", "\"a\\\"b\\\\c\""),
            ("<x>&", "\"\\u003cx\\u003e\\u0026\""),
            ("l\nr\r\t\u{1}", "\"l\\nr\\r\\t\\u0001\""),
            ("\u{2028}\u{2029}\u{2026}", "\"\\u2028\\u2029\u{2026}\""),
        ]
        for (value, expected) in cases {
            let quoted = JSONText.quoted(value)
            #expect(quoted == expected)
            let parsed = try JSONSerialization.jsonObject(with: Data("[\(quoted)]".utf8)) as? [String]
            #expect(parsed == [value])
        }
    }
}
