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
            let name = item.trimmingCharacters(in: .whitespaces).lowercased()
            switch name {
            case "", "identity": continue
            case "x-gzip": codings.append(.gzip)
            default:
                guard let coding = ContentCoding(rawValue: name) else { return nil }
                codings.append(coding)
            }
        }
        return codings
    }
}
