import CertAuthority
import Foundation
import SessionStore

/// `devproxy sessions`: the saved session stores under the data directory, newest first.
enum SessionsCommand {
    static let usage = """
    Saved sessions (one SQLite file per run, the newest 20 kept) with their flow counts and sizes.

      devproxy sessions                      sessions/ in the data directory
      devproxy sessions --ca-dir ca --json

    The data directory is --ca-dir DIR, else $DEVPROXY_HOME, else ./ca if present, else
    $XDG_DATA_HOME/devproxy.
    """

    struct JSONSession: Encodable {
        let path: String
        let flows: Int?
        let bytes: Int
        let modified: String
    }

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" {
            Output.line(usage)
            return 0
        }
        let arguments = try Arguments(raw, valued: ["ca-dir"], booleans: ["json"])
        guard arguments.positionals.isEmpty else { throw UsageError("`devproxy sessions` takes no FILE; see --help") }
        let directory = SessionDirectory(path: CAStore.resolveDirectory(flag: arguments.value("ca-dir")) + "/sessions")
        let sessions = directory.list()
        if arguments.flag("json") {
            Output.json(sessions.map {
                JSONSession(path: $0.path, flows: $0.flowCount, bytes: $0.size, modified: ISO8601DateFormatter().string(from: $0.modified))
            })
            return 0
        }
        guard !sessions.isEmpty else {
            Output.line("No saved sessions in \(directory.path).")
            return 0
        }
        let header = ["MODIFIED", "FLOWS", "SIZE", "FILE"]
        var rows: [[String]] = []
        for session in sessions {
            rows.append([Output.date(session.modified), session.flowCount.map(String.init) ?? "unreadable",
                         size(session.size), session.path])
        }
        Table.print(header: header, rows: rows)
        Output.line()
        Output.line("\(sessions.count) session(s) in \(directory.path); the newest \(directory.keep) are kept.")
        return 0
    }

    /// `512 B`, `3.4 KiB`, `12.0 MiB`.
    static func size(_ bytes: Int) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        let units = ["KiB", "MiB", "GiB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return String(format: "%.1f %@", value, units[unit])
    }
}
