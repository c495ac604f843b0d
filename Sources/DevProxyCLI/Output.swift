import CertAuthority
import DevProxy
import Foundation

/// Writing to the terminal: results to stdout, warnings and errors to stderr.
enum Output {
    /// Set when standard output carries data (`run --log /dev/stdout`, `--har /dev/stdout`): the
    /// status lines then go to stderr, so a reader of stdout gets the flows alone.
    nonisolated(unsafe) static var linesToStandardError = false

    /// A command's usage: asked for (`--help`), on stdout and exit 0; for a command called without
    /// what it needs (`devproxy har`), on stderr and exit 2, as for any usage error, so a script
    /// reading stdout does not take the help for output.
    static func usage(_ text: String, missing: Bool) -> Int32 {
        guard missing else {
            line(text)
            return 0
        }
        writeAll(Array((printable(text) + "\n").utf8), to: STDERR_FILENO)
        return 2
    }

    static func line(_ text: String = "") {
        raw(printable(text))
    }

    /// `line` without `printable`: for DevProxy's own escape codes (the QR code's colours).
    static func raw(_ text: String) {
        if linesToStandardError {
            writeAll(Array((text + "\n").utf8), to: STDERR_FILENO)
            return
        }
        print(text)
    }

    /// `text` with every character a terminal would act on instead of showing written as an
    /// escape (`TerminalText.visible`): much of what is printed came from the network or from a
    /// file (a report's hostname, a pin list's pattern).
    static func printable(_ text: String) -> String {
        TerminalText.visible(text)
    }

    static func warning(_ text: String) {
        writeAll(Array(("warning: " + printable(text) + "\n").utf8), to: STDERR_FILENO)
    }

    /// The first `limit` of `texts` as warnings, then one that counts the rest as `rest`
    /// (`20 more unreadable line(s)`): a wrong file of a million lines is not a million warnings.
    static func warnings(_ texts: [String], limit: Int = 10, rest: String) {
        texts.prefix(limit).forEach(warning)
        if texts.count > limit { warning("\(texts.count - limit) more \(rest)") }
    }

    static func error(_ text: String) {
        writeAll(Array(("error: " + printable(text) + "\n").utf8), to: STDERR_FILENO)
    }

    /// What a command wrote to `path`, said on stdout; on stderr when `path` is a stream
    /// (`--out /dev/stdout`), so the note never lands inside the output it describes.
    static func wrote(to path: String, _ lines: String...) {
        let text = lines.joined(separator: "\n")
        if SecureFile.isStream(path) {
            writeAll(Array((text + "\n").utf8), to: STDERR_FILENO)
        } else {
            line(text)
        }
    }

    /// Bytes as they are (a PEM, a HAR, a snippet) to stdout.
    static func raw(_ bytes: [UInt8]) {
        fflush(nil)
        writeAll(bytes, to: STDOUT_FILENO)
    }

    /// Writes all of `bytes` to `descriptor`. A reader that has gone (`devproxy har … | head`:
    /// EPIPE, SIGPIPE being ignored) ends the write quietly, as the shell expects of a command
    /// whose output nobody reads; `FileHandle.write(_:)` traps on it, and the process died with
    /// SIGILL and a backtrace.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        _ = bytes.withUnsafeBytes { SecureFile.writeAll(descriptor, $0) }
    }

    /// Pretty-printed JSON of an encodable value, keys sorted, slashes unescaped.
    static func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value) { print(String(decoding: data, as: UTF8.self)) }
    }

    /// `2026-12-07 09:03 UTC`, for humans.
    static func date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }
}
