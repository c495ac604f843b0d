import Foundation

/// The live console: one line per finished flow, errors marked so they stand out.
///
/// Lines go to an output closure (a file handle in the CLI, an array in tests), one call per
/// flow under a lock, so lines from concurrent connections never interleave.
public final class ConsoleFlowPrinter: FlowSink, @unchecked Sendable {
    // @unchecked: `output` is only called under `lock`; everything else is immutable.

    /// How lines are decorated.
    public enum Style: Sendable {
        /// No escape codes: for pipes and files.
        case plain
        /// ANSI colours: errors red, 4xx/5xx statuses yellow/red, tunnels dim.
        case terminal
    }

    public let style: Style
    public let timeZone: TimeZone
    private let output: @Sendable (String) -> Void
    private let lock = NSLock()

    /// - Parameters:
    ///   - style: `.terminal` only when a person is watching (see `init(fileHandle:timeZone:)`).
    ///   - timeZone: for the time of day at the start of each line.
    ///   - output: receives each line, without a newline.
    public init(style: Style = .plain, timeZone: TimeZone = .current, output: @escaping @Sendable (String) -> Void) {
        self.style = style
        self.timeZone = timeZone
        self.output = output
    }

    /// Prints to `fileHandle`, in colour only when it is a terminal.
    public convenience init(fileHandle: FileHandle = .standardOutput, timeZone: TimeZone = .current) {
        let style: Style = isatty(fileHandle.fileDescriptor) == 1 ? .terminal : .plain
        self.init(style: style, timeZone: timeZone) { line in
            fileHandle.write(Data((line + "\n").utf8))
        }
    }

    public func record(_ flow: Flow) {
        let text = Self.line(for: flow, style: style, timeZone: timeZone)
        lock.lock()
        defer { lock.unlock() }
        output(text)
    }
}
