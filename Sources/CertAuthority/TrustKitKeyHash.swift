import CTLS
import Foundation

/// TrustKit's own SubjectPublicKeyInfo hash, as its iOS/macOS code computes it.
///
/// Apple's Security framework does not expose SPKI bytes, so TrustKit prefixes the raw public key
/// (`SecKeyCopyExternalRepresentation`: PKCS#1 RSAPublicKey DER, or `04||X||Y` for EC) with a
/// fixed DER header chosen by key type and size, then takes SHA-256
/// (TrustKit `TrustKit/Pinning/TSKSPKIHashCache.m`). The result equals the standard SPKI pin for
/// RSA keys with e = 65537 and uncompressed named-curve EC keys, and differs otherwise.
public enum TrustKitKeyHash {
    /// The key kinds TrustKit can hash (`isKeySupported`); anything else yields no hash.
    public enum SupportedKey: String, Sendable, CaseIterable {
        case rsa2048 = "RSA 2048"
        // RSA-3072 support was added in 2024-03 (TrustKit 3.0.5+).
        case rsa3072 = "RSA 3072"
        case rsa4096 = "RSA 4096"
        case ecP256 = "EC P-256"
        case ecP384 = "EC P-384"

        /// The fixed ASN.1 header TrustKit prepends to the raw key bytes.
        public var header: [UInt8] {
            switch self {
            case .rsa2048: return Self.bytes("30820122300d06092a864886f70d01010105000382010f00")
            case .rsa3072: return Self.bytes("308201a2300d06092a864886f70d01010105000382018f00")
            case .rsa4096: return Self.bytes("30820222300d06092a864886f70d01010105000382020f00")
            case .ecP256: return Self.bytes("3059301306072a8648ce3d020106082a8648ce3d030107034200")
            case .ecP384: return Self.bytes("3076301006072a8648ce3d020106052b81040022036200")
            }
        }

        private static func bytes(_ hex: String) -> [UInt8] {
            var out: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                out.append(UInt8(hex[index..<next], radix: 16)!)
                index = next
            }
            return out
        }
    }

    /// The kind of `certificate`'s key if TrustKit supports it, else nil.
    public static func supportedKey(of certificate: Certificate) -> SupportedKey? {
        guard let key = X509_get0_pubkey(certificate.pointer) else { return nil }
        return supportedKey(ofKey: key)
    }

    /// The kind of the key in a DER SubjectPublicKeyInfo if TrustKit supports it, else nil.
    public static func supportedKey(ofSPKI spkiDER: [UInt8]) -> SupportedKey? {
        guard let key = decode(spkiDER) else { return nil }
        defer { EVP_PKEY_free(key) }
        return supportedKey(ofKey: key)
    }

    private static func supportedKey(ofKey key: OpaquePointer) -> SupportedKey? {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            switch EVP_PKEY_get_bits(key) {
            case 2048: return .rsa2048
            case 3072: return .rsa3072
            case 4096: return .rsa4096
            default: return nil
            }
        case EVP_PKEY_EC:
            switch curveName(of: key) {
            case "prime256v1": return .ecP256
            case "secp384r1": return .ecP384
            default: return nil
            }
        default:
            return nil
        }
    }

    /// The bytes `SecKeyCopyExternalRepresentation` returns for the key: PKCS#1 RSAPublicKey DER
    /// for RSA, the uncompressed point `04||X||Y` for EC. nil for unsupported keys.
    public static func externalRepresentation(of certificate: Certificate) -> [UInt8]? {
        guard supportedKey(of: certificate) != nil else { return nil }
        return externalRepresentation(ofSPKI: certificate.spkiDER)
    }

    /// What `SecKeyCopyExternalRepresentation` returns for the key of a DER SubjectPublicKeyInfo,
    /// whatever its size: PKCS#1 RSAPublicKey DER for RSA (Apple's `kSecAttrKeyTypeRSA` export),
    /// `04||X||Y` for EC on any named curve. nil for other key types (Ed25519 and the like,
    /// which `SecKey` does not hold).
    public static func externalRepresentation(ofSPKI spkiDER: [UInt8]) -> [UInt8]? {
        // A key decoded from the SPKI always has provider parameters to read; a certificate
        // minted in this process holds a legacy EC_KEY, which has none, hence the round trip.
        guard let key = decode(spkiDER) else { return nil }
        defer {
            EVP_PKEY_free(key)
            OpenSSLErrorQueue.clear()
        }
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            var out: UnsafeMutablePointer<UInt8>?
            let length = i2d_PublicKey(key, &out)
            guard length > 0, let out else { return nil }
            defer { CTLS_OPENSSL_free(out) }
            return Array(UnsafeBufferPointer(start: out, count: Int(length)))
        case EVP_PKEY_EC:
            // Always the uncompressed form, whatever the certificate carries: Apple exports EC
            // keys as 04||X||Y.
            // "qx"/"qy" are OSSL_PKEY_PARAM_EC_PUB_X/_Y (core_names.h, not in the CTLS umbrella).
            let size = (Int(EVP_PKEY_get_bits(key)) + 7) / 8
            guard size > 0, let x = coordinate("qx", of: key, size: size),
                  let y = coordinate("qy", of: key, size: size) else { return nil }
            return [0x04] + x + y
        default:
            return nil
        }
    }

    /// TrustKit's hash of the key of a DER SubjectPublicKeyInfo, or nil when TrustKit cannot hash it.
    public static func hash(ofSPKI spkiDER: [UInt8]) -> [UInt8]? {
        guard let kind = supportedKey(ofSPKI: spkiDER), let raw = externalRepresentation(ofSPKI: spkiDER) else {
            return nil
        }
        return Digest.sha256(kind.header + raw)
    }

    private static func decode(_ spkiDER: [UInt8]) -> OpaquePointer? {
        spkiDER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
    }

    /// TrustKit's reconstructed SPKI: the fixed header followed by the external representation.
    public static func reconstructedSPKI(of certificate: Certificate) -> [UInt8]? {
        guard let kind = supportedKey(of: certificate), let raw = externalRepresentation(of: certificate) else {
            return nil
        }
        return kind.header + raw
    }

    /// SHA-256 of the reconstructed SPKI, or nil when TrustKit could not hash the key
    /// (`TSKTrustEvaluationErrorCouldNotGenerateSpkiHash`).
    public static func hash(of certificate: Certificate) -> [UInt8]? {
        reconstructedSPKI(of: certificate).map(Digest.sha256)
    }

    /// The hash as a base64 pin (no `sha256/` prefix), as written in `TSKPublicKeyHashes`.
    public static func pin(of certificate: Certificate) -> String? {
        hash(of: certificate)?.base64
    }

    /// The EC curve's short name (`prime256v1`, `secp384r1`, …).
    private static func curveName(of key: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &buffer, buffer.count, &length) == 1 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// One affine coordinate of an EC public key, left-padded to the field size.
    private static func coordinate(_ name: String, of key: OpaquePointer, size: Int) -> [UInt8]? {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        var out = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(number, &out, Int32(size)) == Int32(size) else { return nil }
        return out
    }
}
