import Foundation

/// Reads a JSON Lines flow log back into `Flow` values, reporting every line it cannot use
/// (torn by a crash, edited by hand, not a flow) with its line number instead of skipping it.
public enum FlowLogReader {
    /// Reads the log at `path`.
    ///
    /// - Returns: the flows in file order, and one problem per unusable line (1-based).
    /// - Throws: `FlowLogError` when the file is missing or unreadable.
    public static func read(path: String) throws -> (flows: [Flow], problems: [(line: Int, reason: String)]) {
        parse(try FlowFile.read(path))
    }

    /// Parses the bytes of a flow log; see `read(path:)`.
    public static func parse(_ bytes: [UInt8]) -> (flows: [Flow], problems: [(line: Int, reason: String)]) {
        let decoder = FlowJSON.decoder()
        var flows: [Flow] = []
        var problems: [(line: Int, reason: String)] = []
        var start = 0
        var number = 0
        while start < bytes.count {
            number += 1
            let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
            let end = newline ?? bytes.count
            let line = bytes[start..<end]
            start = end + 1
            if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
                problems.append((number, "empty line"))
                continue
            }
            do {
                flows.append(try decoder.decode(Flow.self, from: Data(line)))
            } catch {
                // Every record is written with its newline in one write(), so a last line without
                // one is what an interrupted writer leaves behind.
                let reason = newline == nil
                    ? "torn record at the end of the file (no newline; the proxy was probably stopped mid-write)"
                    : FlowJSON.describe(error)
                problems.append((number, reason))
            }
        }
        return (flows, problems)
    }
}
