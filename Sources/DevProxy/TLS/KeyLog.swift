import CertAuthority
import CTLS
import Foundation

/// Writes TLS secrets in the NSS key log format (one line per secret) so Wireshark can decrypt
/// a capture. One file per process: OpenSSL's keylog callback carries no context pointer.
public enum KeyLog {
    private static let state = NSLock()
    /// The key log's descriptor; -1 when none is open or writing to it failed.
    nonisolated(unsafe) private static var descriptor: Int32 = -1

    /// Starts logging to `path` (created 0600, appended to).
    /// - Throws: `FlowLogError` when it cannot be opened or made private.
    public static func open(path: String) throws {
        // As the flow log opens its file: created 0600, an existing one tightened to 0600 (TLS
        // secrets must not stay world-readable), a FIFO Wireshark reads left as it is.
        let fd = try FlowFile.openForAppending(path).fd
        state.lock()
        descriptor = fd
        state.unlock()
    }

    /// Whether a key log is open.
    static var isEnabled: Bool {
        state.lock()
        defer { state.unlock() }
        return descriptor >= 0
    }

    /// Installs the callback on a context.
    static func install(on context: OpaquePointer) {
        SSL_CTX_set_keylog_callback(context) { _, line in
            guard let line else { return }
            KeyLog.write(Array((String(cString: line) + "\n").utf8))
        }
    }

    /// Appends one line. A write that fails (a full disk, a FIFO whose reader has gone) stops the
    /// key log with one line on stderr and the proxy goes on: Foundation's `FileHandle.write(_:)`,
    /// used before, trapped on it and took the whole proxy down on the next handshake.
    private static func write(_ line: [UInt8]) {
        state.lock()
        defer { state.unlock() }
        guard descriptor >= 0, let failure = line.withUnsafeBytes({ SecureFile.writeAll(descriptor, $0) }) else { return }
        Glibc.close(descriptor)
        descriptor = -1
        StandardError.warn("the key log stopped (\(String(cString: strerror(failure)))); no more TLS secrets are written to it")
    }
}
