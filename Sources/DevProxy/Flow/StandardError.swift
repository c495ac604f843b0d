import Foundation

/// A line on stderr from the engine, for a failure the proxy survives but its user must hear of
/// at once (a key log or flow log that can no longer be written). Written with write(2):
/// Foundation's `FileHandle.write(_:)` traps when stderr's reader has gone.
enum StandardError {
    static func warn(_ text: String) {
        // Its text may carry what a peer sent (a host name, an origin's message): controls escaped.
        let line = Array(("warning: " + TerminalText.visible(text) + "\n").utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress!, $0.count) }
    }
}
