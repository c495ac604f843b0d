import CTLS
import Foundation

/// A private key (EVP_PKEY), owned exclusively by this object and freed with it.
///
/// Safe to share between threads once built: OpenSSL treats a finished EVP_PKEY as read-only
/// for signing.
public final class PrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of an EVP_PKEY; the caller must not free it.
    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Lends the EVP_PKEY to OpenSSL calls in other modules; the pointer must not escape `body`.
    public func withEVPPKey<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try body(pointer)
    }

    /// Generates a fresh key of the given type.
    ///
    /// EC keys come from the legacy EC_KEY path: OpenSSL 3's provider keys make
    /// `X509_set_pubkey` cost ~300 µs, which dominates minting a leaf.
    public static func generate(_ type: KeyType) throws -> PrivateKey {
        OpenSSLErrorQueue.clear()
        if let group = CurveGroups.shared.group(for: type) {
            guard let key = CTLS_EVP_PKEY_new_legacy_ec(group) else { throw CAError.openSSL("generating an \(type.rawValue) key") }
            return PrivateKey(takingOwnership: key)
        }
        guard let bits = type.rsaBits, let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, nil) else {
            throw CAError.openSSL("preparing \(type.rawValue) key generation")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1,
              EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits) == 1,
              EVP_PKEY_keygen(ctx, &key) == 1, let key else {
            throw CAError.openSSL("generating an \(type.rawValue) key")
        }
        return PrivateKey(takingOwnership: key)
    }

    /// Reads a PEM private key (PKCS#8, encrypted PKCS#8, or traditional).
    ///
    /// - Parameter passphrase: needed when the key is encrypted; never prompts on a terminal.
    /// - Throws: `.passphraseRequired`, `.wrongPassphrase` or `.corruptKey`.
    public convenience init(pem: [UInt8], passphrase: String? = nil) throws {
        let text = String(decoding: pem, as: UTF8.self)
        let encrypted = text.contains("ENCRYPTED")
        guard text.contains("PRIVATE KEY-----") else {
            throw CAError(.corruptKey, "no PEM private key found")
        }
        if encrypted && passphrase == nil {
            throw CAError(.passphraseRequired,
                          "the key is encrypted; give its passphrase with --passphrase-file FILE or DEVPROXY_CA_PASSPHRASE")
        }
        let bio = try MemoryBIO(bytes: pem)
        OpenSSLErrorQueue.clear()
        // OpenSSL reads `u` as the passphrase only through a callback; one that fails without
        // a passphrase also stops OpenSSL from prompting on the terminal.
        let key: OpaquePointer? = passphrase.flatMap { Array($0.utf8CString) }.withOptionalPointer { pass in
            PEM_read_bio_PrivateKey(bio.pointer, nil, { buffer, size, _, user in
                guard let buffer, let user else { return -1 }
                let source = user.assumingMemoryBound(to: CChar.self)
                let length = min(Int(strlen(source)), Int(size))
                memcpy(buffer, source, length)
                return Int32(length)
            }, pass)
        }
        guard let key else {
            let details = OpenSSLErrorQueue.drain()
            if encrypted, details.contains(where: { $0.contains("bad decrypt") || $0.contains("decrypt") }) {
                throw CAError(.wrongPassphrase, "wrong passphrase for the encrypted key")
            }
            throw CAError(.corruptKey, "the private key is corrupt or truncated" +
                          (details.isEmpty ? "" : " (" + details.joined(separator: "; ") + ")"))
        }
        self.init(takingOwnership: key)
    }

    /// The key as PEM: PKCS#8, encrypted with AES-256-CBC when a passphrase is given.
    public func pem(passphrase: String? = nil) throws -> [UInt8] {
        let bio = try MemoryBIO()
        OpenSSLErrorQueue.clear()
        let ok: Int32
        if let passphrase {
            var pass = Array(passphrase.utf8CString)
            let length = Int32(pass.count - 1)
            ok = pass.withUnsafeMutableBufferPointer {
                PEM_write_bio_PKCS8PrivateKey(bio.pointer, pointer, EVP_aes_256_cbc(), $0.baseAddress, length, nil, nil)
            }
        } else {
            ok = PEM_write_bio_PKCS8PrivateKey(bio.pointer, pointer, nil, nil, 0, nil, nil)
        }
        guard ok == 1 else { throw CAError.openSSL("encoding the private key") }
        return bio.bytes
    }

    /// DER SubjectPublicKeyInfo of the public half.
    public var publicKeyDER: [UInt8] {
        get throws {
            var out: UnsafeMutablePointer<UInt8>?
            let length = i2d_PUBKEY(pointer, &out)
            guard length > 0, let out else { throw CAError.openSSL("encoding the public key") }
            defer { CTLS_OPENSSL_free(out) }
            return Array(UnsafeBufferPointer(start: out, count: Int(length)))
        }
    }

    /// The pin (`sha256/<base64>`) of the public half.
    public var pin: String {
        get throws { SPKIPin.sha256(of: try publicKeyDER) }
    }

    /// A short description such as `EC P-256` or `RSA 2048`.
    public var algorithmDescription: String { KeyDescription.describe(pointer) }

    /// Whether this is an RSA key (one that can also encipher: TLS's RSA key exchange).
    public var isRSA: Bool { EVP_PKEY_get_base_id(pointer) == EVP_PKEY_RSA }

    /// The digest to sign with: SHA-384 for P-384 keys, SHA-256 otherwise.
    var signingDigest: OpaquePointer? {
        KeyDescription.describe(pointer) == "EC P-384" ? EVP_sha384() : EVP_sha256()
    }
}

/// The EC groups keys are generated on, built once: constructing a group from its parameters
/// costs about as much as generating a key on it.
final class CurveGroups: @unchecked Sendable {
    // Built in init and never mutated; OpenSSL allows concurrent reads of an EC_GROUP.
    static let shared = CurveGroups()
    private let p256: OpaquePointer?
    private let p384: OpaquePointer?

    private init() {
        p256 = KeyType.p256.curveNID.flatMap(EC_GROUP_new_by_curve_name)
        p384 = KeyType.p384.curveNID.flatMap(EC_GROUP_new_by_curve_name)
    }

    func group(for type: KeyType) -> OpaquePointer? {
        switch type {
        case .p256: return p256
        case .p384: return p384
        default: return nil
        }
    }
}

extension Optional where Wrapped == [CChar] {
    /// Calls `body` with a pointer to the array's bytes, or nil.
    func withOptionalPointer<R>(_ body: (UnsafeMutableRawPointer?) -> R) -> R {
        guard var array = self else { return body(nil) }
        return array.withUnsafeMutableBytes { body($0.baseAddress) }
    }
}

/// Describes an EVP_PKEY in the words users know (`EC P-256`, `RSA 2048`).
enum KeyDescription {
    static func describe(_ key: OpaquePointer) -> String {
        let bits = EVP_PKEY_get_bits(key)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return "RSA \(bits)"
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            if EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 {
                switch String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) {
                case "prime256v1", "P-256": return "EC P-256"
                case "secp384r1", "P-384": return "EC P-384"
                case "secp521r1", "P-521": return "EC P-521"
                case let other: return "EC \(other)"
                }
            }
            return "EC \(bits)"
        case EVP_PKEY_ED25519: return "Ed25519"
        case EVP_PKEY_ED448: return "Ed448"
        case EVP_PKEY_DSA: return "DSA \(bits)"
        default: return "unknown key (\(bits) bits)"
        }
    }
}
