import Foundation

/// Writing to the terminal: results to stdout, warnings and errors to stderr.
enum Output {
    static func line(_ text: String = "") {
        print(text)
    }

    static func warning(_ text: String) {
        FileHandle.standardError.write(Data(("warning: " + text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("error: " + text + "\n").utf8))
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
