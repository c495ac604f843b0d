import Foundation

/// One pinned public-key digest: an algorithm and the decoded digest bytes.
///
/// TrustKit and Android NSC pin SHA-256 only; OkHttp also accepts SHA-1 (`sha1/`).
public struct Pin: Hashable, Sendable, CustomStringConvertible {
    /// The digest algorithm applied to the public key.
    public enum Algorithm: String, Sendable {
        case sha256
        case sha1
    }

    public let algorithm: Algorithm
    /// The decoded digest; its length is not checked here (OkHttp never checks it).
    public let digest: [UInt8]

    public init(_ algorithm: Algorithm, digest: [UInt8]) {
        self.algorithm = algorithm
        self.digest = digest
    }

    /// A SHA-256 pin from standard padded base64, or nil if it does not decode.
    public init?(sha256Base64 text: String) {
        guard let data = Data(base64Encoded: text) else { return nil }
        self.init(.sha256, digest: [UInt8](data))
    }

    /// Canonical base64 of the digest.
    public var base64: String { Data(digest).base64EncodedString() }

    /// `sha256/<base64>` or `sha1/<base64>`, OkHttp's `Pin.toString()`.
    public var description: String { "\(algorithm.rawValue)/\(base64)" }

    /// `pin-sha256="<base64>"`, the RFC 7469 directive form used in reports' `known-pins`.
    public var directive: String { "pin-\(algorithm.rawValue)=\"\(base64)\"" }
}
