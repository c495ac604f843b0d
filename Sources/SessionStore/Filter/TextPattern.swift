import CSystem
import Foundation

/// A filter's regular expression, compiled once and matched case-insensitively, as mitmproxy's
/// filters are.
///
/// A pattern with no regular-expression syntax (`example.com` is not one: `.` is syntax, but
/// `example\.com` and `login` are) is searched for as bytes, ASCII case folded, without building
/// a string per row: that is most filters typed by hand, and it keeps `~b` over 100k bodies fast.
/// Everything else goes to `NSRegularExpression` (ICU syntax, close to Python's).
final class TextPattern {
    private enum Matcher {
        /// Lower-case ASCII bytes, NUL-terminated for `strcasestr`.
        case literal([CChar])
        case regex(NSRegularExpression)
    }

    private let matcher: Matcher

    /// Compiles `pattern`.
    /// - Parameter lines: `^` and `$` match at line breaks (header blocks are one line per field).
    /// - Throws: `NSRegularExpression`'s error for a pattern ICU rejects.
    init(_ pattern: String, lines: Bool = false) throws {
        if let literal = Self.literal(pattern) {
            matcher = .literal(Array(literal.lowercased().utf8CString))
        } else {
            var options: NSRegularExpression.Options = [.caseInsensitive]
            if lines { options.insert(.anchorsMatchLines) }
            matcher = .regex(try NSRegularExpression(pattern: pattern, options: options))
        }
    }

    /// Whether `pattern` compiles; the reason when it does not.
    static func validate(_ pattern: String) -> String? {
        if literal(pattern) != nil { return nil }
        do {
            _ = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            return nil
        } catch {
            return "not a valid regular expression"
        }
    }

    /// The text `pattern` stands for when it uses no regular-expression syntax (escaped
    /// punctuation counts as itself), or nil. ASCII only: other letters need Unicode case folding.
    static func literal(_ pattern: String) -> String? {
        var literal = ""
        var escaped = false
        for scalar in pattern.unicodeScalars {
            guard scalar.isASCII else { return nil }
            if escaped {
                // `\d`, `\b`, `\n` are classes or escapes; `\.` or `\/` is the character itself.
                if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) { return nil }
                literal.unicodeScalars.append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if ".^$*+?()[]{}|".unicodeScalars.contains(scalar) {
                return nil
            } else {
                literal.unicodeScalars.append(scalar)
            }
        }
        return escaped ? nil : literal
    }

    /// Whether the pattern occurs in `text`, a NUL-terminated UTF-8 string of `count` bytes.
    func matches(text: UnsafePointer<CChar>, count: Int) -> Bool {
        switch matcher {
        case .literal(let needle):
            // glibc's strcasestr is a vectorised two-way search; folding is ASCII-only in the C locale.
            return needle.withUnsafeBufferPointer { strcasestr(text, $0.baseAddress!) != nil }
        case .regex(let regex):
            let string = String(decoding: UnsafeRawBufferPointer(start: text, count: count), as: UTF8.self)
            return Self.search(regex, string)
        }
    }

    /// Whether the pattern occurs in `bytes` (a blob: may hold NULs, may not be UTF-8).
    func matches(bytes: UnsafeRawBufferPointer) -> Bool {
        switch matcher {
        case .literal(let needle):
            return Self.contains(bytes, needle.dropLast())
        case .regex(let regex):
            return Self.search(regex, String(decoding: bytes, as: UTF8.self))
        }
    }

    private static func search(_ regex: NSRegularExpression, _ string: String) -> Bool {
        let range = NSRange(location: 0, length: string.utf16.count)
        return regex.firstMatch(in: string, options: [], range: range) != nil
    }

    /// ASCII-case-insensitive substring search over raw bytes (`needle` lower case).
    private static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: ArraySlice<CChar>) -> Bool {
        let needle = needle.map { UInt8(bitPattern: $0) }
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        @inline(__always) func fold(_ byte: UInt8) -> UInt8 { byte &- 65 < 26 ? byte | 0x20 : byte }
        let first = needle[0]
        for start in 0...(haystack.count - needle.count) where fold(haystack[start]) == first {
            var index = 1
            while index < needle.count, fold(haystack[start + index]) == needle[index] { index += 1 }
            if index == needle.count { return true }
        }
        return false
    }
}
