import CTLS
import Foundation

/// Writes TLS secrets in the NSS key log format (one line per secret) so Wireshark can decrypt
/// a capture. One file per process: OpenSSL's keylog callback carries no context pointer.
public enum KeyLog {
    private static let state = NSLock()
    nonisolated(unsafe) private static var handle: FileHandle?

    /// Starts logging to `path` (created 0600, appended to).
    public static func open(path: String) throws {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw NetworkError(.failed, "cannot open the key log \(path): \(String(cString: strerror(errno)))") }
        state.lock()
        handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        state.unlock()
    }

    /// Whether a key log is open.
    static var isEnabled: Bool {
        state.lock()
        defer { state.unlock() }
        return handle != nil
    }

    /// Installs the callback on a context.
    static func install(on context: OpaquePointer) {
        SSL_CTX_set_keylog_callback(context) { _, line in
            guard let line else { return }
            KeyLog.write(String(cString: line) + "\n")
        }
    }

    private static func write(_ line: String) {
        state.lock()
        defer { state.unlock() }
        handle?.write(Data(line.utf8))
    }
}
