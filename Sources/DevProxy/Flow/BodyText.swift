import Foundation

/// Whether captured body bytes should be shown as text, and the text if so.
enum BodyText {
    /// Types that are text whatever their bytes look like (as long as they are UTF-8).
    private static let textualMarkers: [[UInt8]] = ["json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded",
                                                    "graphql", "yaml", "csv"].map { Array($0.utf8) }
    private static let textPrefix = Array("text/".utf8)

    /// Whether `contentType` names a textual media type (`text/*`, JSON, XML, JavaScript, forms).
    ///
    /// Byte-level on purpose: it runs twice per flow, and Foundation's string search showed up
    /// in the proxy's profile.
    static func isTextual(contentType: String?) -> Bool {
        guard let contentType else { return false }
        let media = Array(contentType.utf8.prefix { $0 != UInt8(ascii: ";") }
            .drop { $0 == UInt8(ascii: " ") }.map { $0 | 0x20 })
        if media.starts(with: textPrefix) { return true }
        return textualMarkers.contains { contains(media, $0) }
    }

    /// Naive substring search: media types are a few dozen bytes.
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            needle.indices.allSatisfy { haystack[start + $0] == needle[$0] }
        }
    }

    /// `bytes` as a string when they are valid UTF-8 and look like text: a textual content
    /// type, or no NUL bytes.
    ///
    /// - Parameter isPrefix: the bytes may stop inside a character; an incomplete last
    ///   character is dropped rather than making the whole prefix "binary".
    static func text(_ bytes: [UInt8], isPrefix: Bool, contentType: String?) -> String? {
        if bytes.isEmpty { return "" }
        let whole = isPrefix ? bytes[0..<completeUTF8Prefix(bytes)] : bytes[...]
        guard isTextual(contentType: contentType) || !whole.contains(0) else { return nil }
        return validUTF8(whole)
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
