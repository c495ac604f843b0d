import Foundation

/// A content coding DevProxy can undo to show a body as text (RFC 9110 §8.4.1).
public enum ContentCoding: String, Sendable, CaseIterable {
    case gzip, deflate, br, zstd

    /// The codings named by a `Content-Encoding` value, in the order they were applied.
    ///
    /// `identity` is dropped and `x-gzip` read as `gzip` ("a recipient SHOULD consider
    /// x-gzip to be equivalent to gzip", RFC 9110 §8.4.1.3).
    /// - Returns: `[]` for no coding at all, `nil` when any coding is one we cannot decode.
    public static func list(fromHeader value: String?) -> [ContentCoding]? {
        guard let value else { return [] }
        var codings: [ContentCoding] = []
        for item in value.split(separator: ",") {
            switch read(item) {
            case .none: continue
            case .coding(let coding): codings.append(coding)
            case .unknown: return nil
            }
        }
        return codings
    }

    /// The names in a `Content-Encoding` value that are no coding DevProxy can undo, lowercased,
    /// in order (`compress` in `gzip, compress`); empty when `list(fromHeader:)` reads them all.
    public static func unknownNames(inHeader value: String) -> [String] {
        value.split(separator: ",").compactMap { item in
            if case .unknown(let name) = read(item) { name } else { nil }
        }
    }

    /// One comma-separated item of a `Content-Encoding` value.
    private enum Item {
        /// Empty, or `identity`.
        case none
        case coding(ContentCoding)
        case unknown(String)
    }

    private static func read(_ item: Substring) -> Item {
        let name = item.trimmingCharacters(in: .whitespaces).lowercased()
        switch name {
        case "", "identity": return .none
        case "x-gzip": return .coding(.gzip)
        default: return ContentCoding(rawValue: name).map(Item.coding) ?? .unknown(name)
        }
    }
}
