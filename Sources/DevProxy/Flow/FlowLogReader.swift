import Foundation

/// Reads a JSON Lines flow log back into `Flow` values, reporting every line it cannot use
/// (torn by a crash, edited by hand, not a flow) with its line number instead of skipping it.
///
/// `devproxy har` reads logs with it, and `devproxy web` checks each line it imports with
/// `problem(in:terminated:)`: the two take the same lines and skip the others for the same reasons.
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
        // A UTF-8 byte order mark (Windows tools, PowerShell 5's `-Encoding UTF8`) is not part of the first line.
        var start = bytes.starts(with: byteOrderMark) ? byteOrderMark.count : 0
        var number = 0
        while start < bytes.count {
            number += 1
            let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n"))
            let end = newline ?? bytes.count
            let line = bytes[start..<end]
            start = end + 1
            switch flow(in: line, terminated: newline != nil, decoder: decoder) {
            case .success(let flow): flows.append(flow)
            case .failure(let problem): problems.append((number, problem.reason))
            }
        }
        return (flows, problems)
    }

    /// Why one line of a flow log (without its newline) is not a flow, or nil when it is one.
    /// - Parameter terminated: whether a newline ended the line (a last line may lack one).
    public static func problem(in line: ArraySlice<UInt8>, terminated: Bool) -> String? {
        guard case .failure(let problem) = flow(in: line, terminated: terminated, decoder: FlowJSON.decoder()) else {
            return nil
        }
        return problem.reason
    }

    /// UTF-8's byte order mark.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Why a line is not a flow.
    public struct LineProblem: Error {
        public var reason: String
    }

    /// The flow one line holds, or why it holds none.
    private static func flow(in line: ArraySlice<UInt8>, terminated: Bool,
                             decoder: JSONDecoder) -> Result<Flow, LineProblem> {
        if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
            return .failure(LineProblem(reason: "empty line"))
        }
        do {
            return .success(try decoder.decode(Flow.self, from: Data(line)))
        } catch {
            // Every record is written with its newline in one write(), so a last line without
            // one is what an interrupted writer leaves behind.
            return .failure(LineProblem(reason: terminated ? FlowJSON.describe(error)
                : "torn record at the end of the file (no newline; the proxy was probably stopped mid-write)"))
        }
    }
}
