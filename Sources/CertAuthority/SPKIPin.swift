import CTLS
import Foundation

/// SPKI pins: `sha256/` + base64(SHA-256(DER SubjectPublicKeyInfo)), as HPKP (RFC 7469 §2.4),
/// TrustKit, Android's `<pin digest="SHA-256">` and OkHttp's `CertificatePinner` use them.
public enum SPKIPin {
    /// The pin with its `sha256/` prefix.
    public static func sha256(of spkiDER: [UInt8]) -> String {
        "sha256/" + base64SHA256(spkiDER)
    }

    /// base64(SHA-256(bytes)), without prefix.
    public static func base64SHA256(_ bytes: [UInt8]) -> String {
        Digest.sha256(bytes).base64
    }

    /// base64(SHA-1(bytes)), without prefix (OkHttp's legacy `sha1/` pins).
    public static func base64SHA1(_ bytes: [UInt8]) -> String {
        Digest.sha1(bytes).base64
    }
}

/// Message digests over libcrypto's one-shot EVP_Digest.
public enum Digest {
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha256(), 32) }
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha1(), 20) }

    private static func digest(_ bytes: [UInt8], _ md: OpaquePointer?, _ size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &out, &length, md, nil) }
        return Array(out.prefix(Int(length)))
    }
}

extension Array where Element == UInt8 {
    /// Standard padded base64, no line breaks (as Foundation writes it), by OpenSSL's encoder:
    /// the flow log encodes a binary body's prefix per exchange, and Foundation's `Data` copy
    /// showed in the per-request profile.
    public var base64: String {
        guard !isEmpty else { return "" }
        let length = 4 * ((count + 2) / 3)
        // EVP_EncodeBlock writes a NUL after the text: one byte of room for it.
        return String(unsafeUninitializedCapacity: length + 1) { text in
            withUnsafeBufferPointer { Int(EVP_EncodeBlock(text.baseAddress, $0.baseAddress, Int32($0.count))) }
        }
    }

    /// Lower-case hex without separators.
    public var hex: String { withUnsafeBytes { $0.hex } }

    /// Upper-case hex pairs separated by colons, as `openssl x509 -fingerprint` prints.
    public var colonHex: String {
        hex.uppercased().chunked(2).joined(separator: ":")
    }
}

extension UnsafeRawBufferPointer {
    /// Lower-case hex without separators, written straight into the string's storage (a body's
    /// SHA-256 is written this way for every flow).
    public var hex: String {
        String(unsafeUninitializedCapacity: count * 2) { text in
            for (index, byte) in enumerated() {
                text[2 * index] = Self.hexDigits[Int(byte >> 4)]
                text[2 * index + 1] = Self.hexDigits[Int(byte & 0x0F)]
            }
            return count * 2
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

extension String {
    func chunked(_ size: Int) -> [String] {
        var result: [String] = []
        var current = startIndex
        while current < endIndex {
            let next = index(current, offsetBy: size, limitedBy: endIndex) ?? endIndex
            result.append(String(self[current..<next]))
            current = next
        }
        return result
    }
}
