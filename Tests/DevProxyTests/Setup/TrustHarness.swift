import CertAuthority
import Foundation
import TestSupport

/// A fresh CA and `devproxy trust …` runs against it, for the trust store tests.
struct TrustHarness {
    let dir = TemporaryDirectory()
    var ca: String { dir.file("ca") }
    var rootPath: String { ca + "/root.pem" }

    init() throws {
        let created = try Subprocess.run(Subprocess.devproxy, ["ca", "init", "--ca-dir", dir.file("ca"), "--name", "Trust Test Root"])
        guard created.status == 0 else { throw TestFailure("ca init failed: \(created.output)") }
    }

    /// The root's store name: `devproxy-` and 8 hex digits of its SHA-256.
    var nickname: String {
        get throws {
            let root = try Certificate.all(from: try SecureFile.read(rootPath, what: "root"))[0]
            return "devproxy-" + String(Digest.sha256(root.der).hex.prefix(8))
        }
    }

    /// Where install keeps its copies of the stores (`$XDG_STATE_HOME`), inside the test's directory.
    var state: String { dir.file("state") }

    /// `devproxy trust ARGS --ca-dir CA`.
    func trust(_ arguments: [String], environment: [String: String] = [:]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, ["trust"] + arguments + ["--ca-dir", ca],
                           environment: ["XDG_STATE_HOME": state].merging(environment) { $1 })
    }

    /// The `error:` lines of a run.
    static func errorLines(_ result: Subprocess.Result) -> [String] {
        result.stderr.split(separator: "\n").map(String.init).filter { $0.hasPrefix("error: ") }
    }
}

/// Every file under `root`, as `relative path → "link:TARGET" | "file:SHA-256" | "dir"`, to show
/// a directory came back byte for byte.
func treeSnapshot(_ root: String) -> [String: String] {
    var snapshot: [String: String] = [:]
    let manager = FileManager.default
    guard let names = manager.subpaths(atPath: root) else { return [:] }
    for name in names {
        let path = root + "/" + name
        if let target = try? manager.destinationOfSymbolicLink(atPath: path) {
            snapshot[name] = "link:" + target
        } else if let data = manager.contents(atPath: path) {
            snapshot[name] = "file:" + Digest.sha256([UInt8](data)).hex
        } else {
            snapshot[name] = "dir"
        }
    }
    return snapshot
}

/// The entries that differ between two snapshots, each as `path: before → after`; empty when equal.
func treeDifferences(_ before: [String: String], _ after: [String: String]) -> [String] {
    Set(before.keys).union(after.keys).sorted().compactMap { key in
        before[key] == after[key] ? nil : "\(key): \(before[key] ?? "absent") → \(after[key] ?? "absent")"
    }
}
