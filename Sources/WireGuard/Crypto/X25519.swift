import CTLS

/// Curve25519 Diffie-Hellman through OpenSSL 3's EVP_PKEY_X25519 (whitepaper §5.4: DH, DH-PUBKEY, DH-GENERATE).
enum X25519 {
    /// A fresh private key from RAND_bytes, clamped as RFC 7748 §5 and `wg genkey` do.
    static func generatePrivate() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 32)
        precondition(RAND_bytes(&bytes, 32) == 1, "RAND_bytes failed")
        bytes[0] &= 248
        bytes[31] &= 127
        bytes[31] |= 64
        return bytes
    }

    /// The public key of a 32-byte private key.
    static func publicKey(of privateKey: [UInt8]) -> [UInt8] {
        guard let key = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, privateKey, 32) else {
            preconditionFailure("OpenSSL's X25519 is unavailable")
        }
        defer { EVP_PKEY_free(key) }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 32
        precondition(EVP_PKEY_get_raw_public_key(key, &out, &length) == 1 && length == 32, "X25519 public key failed")
        return out
    }

    /// DH(private, public): the shared secret, or nil when the peer's point gives all zeros (a
    /// small-order point, which the whitepaper's §5.4 DH must reject) or OpenSSL refuses it.
    static func sharedSecret(privateKey: [UInt8], publicKey: [UInt8]) -> [UInt8]? {
        guard privateKey.count == 32, publicKey.count == 32,
              let mine = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nil, privateKey, 32) else { return nil }
        defer { EVP_PKEY_free(mine) }
        guard let theirs = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, publicKey, 32) else { return nil }
        defer { EVP_PKEY_free(theirs) }
        guard let context = EVP_PKEY_CTX_new(mine, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var out = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, theirs) == 1,
              EVP_PKEY_derive(context, &out, &length) == 1, length == 32 else {
            ERR_clear_error()
            return nil
        }
        guard out.contains(where: { $0 != 0 }) else { return nil }
        return out
    }
}
