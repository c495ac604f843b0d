import CertAuthority
import Foundation
import Testing

/// `PathName` against `NSString`'s path methods, and `JSONDocument`'s reasons.
@Suite struct PathNameTests {
    /// The same answers as `NSString` wherever `NSString` does not trap.
    @Test func matchesNSStringOnLongerPaths() {
        for path in ["ab", "flows.jsonl", "/a", "/ab", "a/b", "dir/flows.jsonl", "/var/tmp/x.har", "dir/sub/", "/",
                     "dir//x", "./ab", "../x", "ab/", "/tmp/"] {
            #expect(PathName.directory(of: path) == (path as NSString).deletingLastPathComponent, "\(path)")
            #expect(PathName.lastComponent(of: path) == (path as NSString).lastPathComponent, "\(path)")
        }
    }

    /// `("a" as NSString).deletingLastPathComponent` traps on Linux; a one-character name is a
    /// name in the working directory.
    @Test func aOneCharacterPathIsANameHere() {
        #expect(PathName.directory(of: "a") == "")
        #expect(PathName.lastComponent(of: "a") == "a")
        #expect(PathName.directory(of: "a/") == "")
        #expect(PathName.join(PathName.directory(of: "l"), "reports.jsonl") == "reports.jsonl")
        #expect(PathName.join(PathName.directory(of: "/l"), "reports.jsonl") == "/reports.jsonl")
        #expect(PathName.join("logs", "reports.jsonl") == "logs/reports.jsonl")
    }

    @Test func jsonDocumentReasons() {
        func reason(_ text: String) -> String? {
            do {
                _ = try JSONDocument.object(Array(text.utf8))
                return nil
            } catch {
                return error.reason
            }
        }
        #expect(reason(#"{"a": 1}"#) == nil)
        #expect(reason(" \n") == "empty, not a JSON object")
        #expect(reason("[1]") == "a JSON array, not an object")
        #expect(reason("\"x\"") == "a JSON string, not an object")
        #expect(reason("{\"a\": 1,\n  \"é\": x}") == "not valid JSON (line 2, column 8: invalid value)")
        #expect(reason("{\"a\": 1") == "not valid JSON (it ends before the JSON does)")
        let object = try? JSONDocument.object(Array(#"{"t": true, "one": 1, "zero": 0, "f": false}"#.utf8))
        #expect(object.map { JSONDocument.isBoolean($0["t"]!) && JSONDocument.isBoolean($0["f"]!) } == true)
        #expect(object.map { JSONDocument.isBoolean($0["one"]!) || JSONDocument.isBoolean($0["zero"]!) } == false)
    }
}
