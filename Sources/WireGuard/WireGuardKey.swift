import Foundation

/// A Curve25519 key, private or public, as 32 bytes; `base64` is the form wg(8) and the
/// WireGuard apps read and print.
public struct WireGuardKey: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Nil unless exactly 32 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Nil unless the text (surrounding whitespace ignored) is base64 of exactly 32 bytes.
    public init?(base64: String) {
        guard let data = Data(base64Encoded: base64.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        self.init(bytes: [UInt8](data))
    }

    public var base64: String { Data(bytes).base64EncodedString() }

    /// Never the key itself: a key does not know whether it is private, so none is printed.
    /// A public key's base64 is what to print when it is wanted.
    public var description: String { "WireGuardKey(32 bytes)" }

    /// A new X25519 private key from RAND_bytes, clamped as `wg genkey` clamps it.
    public static func generatePrivate() -> WireGuardKey { WireGuardKey(bytes: X25519.generatePrivate())! }

    /// The public key of this private key (what `wg pubkey` prints for it).
    public var publicKey: WireGuardKey { WireGuardKey(bytes: X25519.publicKey(of: bytes))! }
}
