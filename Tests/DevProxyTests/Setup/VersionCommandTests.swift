import Foundation
import Testing
import TestSupport

/// `devproxy --version`: the versions a bug report needs, read from the libraries that run, and
/// the same as the system's own tools report for those libraries.
@Suite struct VersionCommandTests {
    func lines() throws -> [String: String] {
        let result = try Subprocess.run(Subprocess.devproxy, ["--version"])
        #expect(result.status == 0, "\(result.output)")
        var fields: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    @Test func namesDevProxyAndEachLibraryAsTheSystemsToolsDo() throws {
        let fields = try lines()
        #expect(fields["DevProxy"]?.isEmpty == false)
        // `openssl version`: "OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)"; the
        // library's part is what devproxy loads too.
        let openssl = try Subprocess.run("openssl", ["version"]).stdout
        let library = openssl.range(of: "(Library: ").map { String(openssl[$0.upperBound...].prefix { $0 != ")" }) }
            ?? openssl.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(fields["OpenSSL"] == library, "\(openssl)")
        // Python's sqlite3 module loads the same system libsqlite3.
        let sqlite = try Subprocess.run("python3", ["-c", "import sqlite3; print(sqlite3.sqlite_version)"]).stdout
        #expect(fields["SQLite"] == sqlite.trimmingCharacters(in: .whitespacesAndNewlines))
        // `nghttp --version`: "nghttp nghttp2/1.52.0".
        let nghttp = try Subprocess.run("nghttp", ["--version"]).stdout
        #expect(nghttp.contains("nghttp2/\(fields["nghttp2"] ?? "?")"), "\(nghttp)")
        for name in ["zstd", "zlib"] {
            #expect(fields[name]?.first?.isNumber == true, "\(name): \(fields[name] ?? "missing")")
        }
        let uname = try Subprocess.run("uname", ["-sr"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(fields["Platform"]?.hasPrefix(uname) == true, "\(fields["Platform"] ?? "missing") vs \(uname)")
    }

    @Test func versionIsAlsoACommand() throws {
        let flag = try Subprocess.run(Subprocess.devproxy, ["--version"])
        let command = try Subprocess.run(Subprocess.devproxy, ["version"])
        #expect(command.status == 0)
        #expect(command.stdout == flag.stdout)
    }
}
