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
    /// Standard padded base64.
    public var base64: String { Data(self).base64EncodedString() }

    /// Lower-case hex without separators.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](); out.reserveCapacity(count * 2)
        for byte in self { out.append(digits[Int(byte >> 4)]); out.append(digits[Int(byte & 0xf)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Upper-case hex pairs separated by colons, as `openssl x509 -fingerprint` prints.
    public var colonHex: String {
        hex.uppercased().chunked(2).joined(separator: ":")
    }
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
