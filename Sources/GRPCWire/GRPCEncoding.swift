import Foundation

/// A message encoding named by `grpc-encoding` (PROTOCOL-HTTP2.md: `identity`, `gzip`,
/// `deflate`, `snappy`, or a custom name). A struct, so names this module does not know stay
/// representable.
public struct GRPCEncoding: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The lower-cased name.
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue.lowercased()
    }

    /// The encoding a `grpc-encoding` value names, surrounding whitespace dropped.
    public init(header value: String) {
        self.init(rawValue: value.trimmingCharacters(in: .whitespaces))
    }

    public static let identity = GRPCEncoding(rawValue: "identity")
    public static let gzip = GRPCEncoding(rawValue: "gzip")
    public static let deflate = GRPCEncoding(rawValue: "deflate")
    public static let zstd = GRPCEncoding(rawValue: "zstd")

    public var description: String { rawValue }
}
