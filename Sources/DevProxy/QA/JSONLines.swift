import CertAuthority
import Foundation

/// Reads JSON Lines files (flow logs, `reports.jsonl`) record by record.
public enum JSONLines {
    /// What a file held: the records that decoded, and one line per line that did not.
    public struct Contents<Record: Sendable>: Sendable {
        public var records: [Record]
        /// `line 7: not a complete record (torn write?)` and the like, in file order.
        public var problems: [String]
    }

    /// Decodes every non-empty line of `path` as `Record`.
    ///
    /// A line that does not decode is reported, never silently dropped; the last line without
    /// a newline that fails to decode is called torn.
    ///
    /// - Throws: `QAError(.unreadable)` when the file cannot be read.
    public static func read<Record: Decodable & Sendable>(_ type: Record.Type, from path: String) throws -> Contents<Record> {
        let bytes: [UInt8]
        do {
            bytes = try SecureFile.contents(of: path)
        } catch {
            throw QAError(.unreadable, "cannot read \(path): \(error.reason)")
        }
        return decode(type, Data(bytes))
    }

    /// Decodes JSON Lines bytes.
    public static func decode<Record: Decodable & Sendable>(_ type: Record.Type, _ data: Data) -> Contents<Record> {
        let decoder = JSONDecoder()
        var contents = Contents<Record>(records: [], problems: [])
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let endsWithNewline = data.last == UInt8(ascii: "\n")
        for (index, line) in lines.enumerated() {
            guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x0d || $0 == 0x09 }) else { continue }
            do {
                contents.records.append(try decoder.decode(Record.self, from: Data(line)))
            } catch {
                let isLast = index == lines.count - 1 && !endsWithNewline
                contents.problems.append("line \(index + 1): " + (isLast ? "not a complete record (torn write?)"
                                                                         : "not a valid record (\(Self.describe(error)))"))
            }
        }
        return contents
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "missing \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "bad value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: return "not JSON"
        }
    }
}
