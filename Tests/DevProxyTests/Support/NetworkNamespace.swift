import Foundation
import TestSupport

/// A network namespace of the test's own (`ip netns add`), with loopback up; deleted when
/// released, which also removes its addresses and nat rules.
final class NetworkNamespace {
    let name: String

    /// Why namespaces cannot be made here (not root, or the kernel refuses), nil when they can.
    static let unavailableReason: String? = {
        guard geteuid() == 0 else { return "network namespaces need root (ip netns add)" }
        let probe = "dpprobe\(getpid())"
        guard let result = try? Subprocess.run("ip", ["netns", "add", probe], timeout: 10), result.status == 0 else {
            return "the kernel refuses network namespaces here (ip netns add failed)"
        }
        _ = try? Subprocess.run("ip", ["netns", "delete", probe], timeout: 10)
        return nil
    }()

    init() throws {
        name = "dpt\(getpid())-\(UInt32.random(in: 0...UInt32.max) % 100_000)"
        let added = try Subprocess.run("ip", ["netns", "add", name], timeout: 10)
        guard added.status == 0 else { throw TestFailure("ip netns add \(name): \(added.output)") }
        try sh("ip link set lo up")
    }

    deinit { _ = try? Subprocess.run("ip", ["netns", "delete", name], timeout: 10) }

    /// The prefix that runs a command inside the namespace.
    var launcher: [String] { ["ip", "netns", "exec", name] }

    /// Runs a shell command line inside the namespace; throws when it fails.
    @discardableResult
    func sh(_ command: String, timeout: TimeInterval = 20) throws -> Subprocess.Result {
        let result = try Subprocess.run("ip", ["netns", "exec", name, "sh", "-c", command], timeout: timeout)
        guard result.status == 0 else { throw TestFailure("in \(name): \(command): \(result.output)") }
        return result
    }

    /// Runs a program inside the namespace as `nobody` with an empty environment (no proxy settings).
    func runAsNobody(_ arguments: [String], timeout: TimeInterval = 30) throws -> Subprocess.Result {
        try Subprocess.run("ip", ["netns", "exec", name, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                  "env", "-i", "PATH=/usr/bin:/bin"] + arguments, timeout: timeout)
    }
}
