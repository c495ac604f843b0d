import Foundation
import TestSupport

/// A tmpfs of a few MiB mounted in a temporary directory, for a session store or a log that
/// fills its disk (needs root); unmounted when released.
final class SmallDisk {
    /// Where the file system is mounted.
    let path: String
    private let directory = TemporaryDirectory()

    init(megabytes: Int = 1) throws {
        path = directory.file("disk")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = try Subprocess.run("mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", path])
        guard mounted.status == 0 else { throw TestFailure("cannot mount a tmpfs at \(path): \(mounted.output)") }
    }

    deinit {
        _ = try? Subprocess.run("umount", ["-l", path])
    }
}
