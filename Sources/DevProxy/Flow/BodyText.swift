import Foundation
import HTTP1
import HTTPTypes

/// Whether captured body bytes should be shown as text, and the text if so.
enum BodyText {
    /// Whether `contentType` names a textual media type: `text/*`, or one whose name contains
    /// `json`, `xml`, `javascript`, `ecmascript`, `x-www-form-urlencoded`, `graphql`, `yaml` or
    /// `csv` (`application/vnd.api+json`, `image/svg+xml`), ASCII letters in either case.
    ///
    /// Byte-level on purpose: it runs twice per flow. One pass over the media type, comparing a
    /// marker only where its first letter is (callgrind: ~2.5k instructions a call when every
    /// marker was searched at every position, ~0.4k now).
    static func isTextual(contentType: String?) -> Bool {
        guard let contentType else { return false }
        return contentType.withUTF8Bytes { utf8 in
            // The media type: up to the first `;`, leading spaces skipped.
            let start = utf8.firstIndex { $0 != UInt8(ascii: " ") } ?? utf8.endIndex
            let end = utf8[start...].firstIndex(of: UInt8(ascii: ";")) ?? utf8.endIndex
            let media = UnsafeBufferPointer(rebasing: utf8[start..<end])
            if contains(media, "text/", at: 0) { return true }
            for index in media.indices {
                // `| 0x20` lowers ASCII letters and leaves `-`, `+`, `.` and `/` as they are.
                let found = switch media[index] | 0x20 {
                case UInt8(ascii: "j"): contains(media, "json", at: index) || contains(media, "javascript", at: index)
                case UInt8(ascii: "x"): contains(media, "xml", at: index) || contains(media, "x-www-form-urlencoded", at: index)
                case UInt8(ascii: "e"): contains(media, "ecmascript", at: index)
                case UInt8(ascii: "g"): contains(media, "graphql", at: index)
                case UInt8(ascii: "y"): contains(media, "yaml", at: index)
                case UInt8(ascii: "c"): contains(media, "csv", at: index)
                default: false
                }
                if found { return true }
            }
            return false
        }
    }

    /// Whether `needle` (lower case) is at `start` in `haystack`, ASCII letters in either case.
    private static func contains(_ haystack: UnsafeBufferPointer<UInt8>, _ needle: StaticString, at start: Int) -> Bool {
        needle.withUTF8Buffer { needle in
            guard start + needle.count <= haystack.count else { return false }
            for index in needle.indices where haystack[start + index] | 0x20 != needle[index] { return false }
            return true
        }
    }

    /// `bytes` as a string when they are valid UTF-8 and look like text: no NUL bytes, or a
    /// textual content type and NULs no more than one byte in `nulShare` (a text body with a
    /// stray NUL is still text; megabytes of NULs labelled `text/plain`, a decompression bomb,
    /// are not: each became `\u0000` in the record, 24 MB of JSON for 4 MiB of body).
    ///
    /// - Parameter isPrefix: the bytes may stop inside a character; an incomplete last
    ///   character is dropped rather than making the whole prefix "binary".
    static func text(_ bytes: [UInt8], isPrefix: Bool, contentType: String?) -> String? {
        if bytes.isEmpty { return "" }
        let whole = isPrefix ? bytes[0..<completeUTF8Prefix(bytes)] : bytes[...]
        guard !whole.contains(0) || isTextual(contentType: contentType) && fewNULs(whole) else { return nil }
        return validUTF8(whole)
    }

    /// A textual body is binary once more than one byte in this many is NUL.
    static let nulShare = 16

    private static func fewNULs(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var nuls = 0
            for byte in buffer where byte == 0 { nuls += 1 }
            return nuls * nulShare <= buffer.count
        }
    }

    /// `bytes` as text: in the charset `contentType` declares when it names one other than UTF-8
    /// and the bytes need it (a byte past ASCII, a NUL of UTF-16, an ISO-2022 escape), else as
    /// `text(_:isPrefix:contentType:)` reads them. `charset` names the declared charset the text
    /// was read in; `charsetError` says why bytes labelled with one were not read in it.
    static func reading(_ bytes: [UInt8], isPrefix: Bool, contentType: String?) -> Reading? {
        // A byte order mark wins over the label, as in a browser (the WHATWG decode sniffs it
        // first): UTF-8 with its mark labelled iso-8859-1 (an IIS or .NET default) read as
        // mojibake, and UTF-16 labelled otherwise was kept as base64.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return text(bytes, isPrefix: isPrefix, contentType: contentType).map { Reading(text: $0) }
        }
        if let marked = BodyCharset(byteOrderMark: bytes[...]), let text = marked.text(bytes[...], isPrefix: isPrefix) {
            return Reading(text: text, charset: marked.name)
        }
        if let charset = needsCharset(bytes) ? BodyCharset(contentType: contentType) : nil {
            if let text = charset.text(bytes[...], isPrefix: isPrefix),
               !text.utf8.contains(0) || isTextual(contentType: contentType) && fewNULs(ArraySlice(text.utf8)) {
                return Reading(text: text, charset: charset.name)
            }
            let note = "not \(charset.name) text"
            guard let text = text(bytes, isPrefix: isPrefix, contentType: contentType) else {
                return Reading(text: nil, charsetError: "\(note): kept as sent")
            }
            return Reading(text: text, charsetError: "\(note): read as UTF-8")
        }
        return text(bytes, isPrefix: isPrefix, contentType: contentType).map { Reading(text: $0) }
    }

    /// What `reading` made of a body's bytes.
    struct Reading {
        /// The text; nil when the bytes are not text (`charsetError` then says why).
        var text: String?
        /// The declared charset `text` was read in; nil for UTF-8 (or bytes that are ASCII in any).
        var charset: String? = nil
        /// Why the declared charset was not used.
        var charsetError: String? = nil
    }

    /// Whether a declared charset changes how `bytes` read: they have a byte past ASCII, a NUL
    /// (UTF-16), or an escape (ISO-2022-JP). ASCII bytes alone read the same in every other one.
    private static func needsCharset(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            buffer.contains { $0 >= 0x80 || $0 == 0 || $0 == 0x1B }
        }
    }

    /// The length of `bytes` without an incomplete UTF-8 sequence at its end.
    static func completeUTF8Prefix(_ bytes: [UInt8]) -> Int {
        var index = bytes.count - 1
        // A sequence is at most 4 bytes: find its lead byte among the last four.
        while index >= 0 && index >= bytes.count - 4 {
            let byte = bytes[index]
            if byte & 0xC0 != 0x80 {
                let needed = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                return bytes.count - index < needed ? index : bytes.count
            }
            index -= 1
        }
        return bytes.count
    }

    private static func validUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        if #available(macOS 15, *) {
            return String(validating: bytes, as: UTF8.self)
        }
        return String(bytes: bytes, encoding: .utf8)
    }
}
