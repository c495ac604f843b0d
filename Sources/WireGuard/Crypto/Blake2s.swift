import CTLS

/// BLAKE2s as WireGuard uses it (whitepaper §5.4): HASH, HMAC, KDF1…3 and the 16-byte keyed MAC,
/// all through OpenSSL 3's BLAKE2S-256 digest and its BLAKE2SMAC.
enum Blake2s {
    /// OpenSSL's BLAKE2s-256, fetched once; libcrypto's fetched algorithms are immutable and thread-safe.
    nonisolated(unsafe) private static let digest: OpaquePointer? = EVP_MD_fetch(nil, "BLAKE2S-256", nil)
    nonisolated(unsafe) private static let keyedMAC: OpaquePointer? = EVP_MAC_fetch(nil, "BLAKE2SMAC", nil)

    /// HASH(parts…): BLAKE2s-256 of the concatenation, 32 bytes.
    static func hash(_ parts: [UInt8]...) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
        defer { EVP_MD_CTX_free(context) }
        var ok = EVP_DigestInit_ex(context, digest, nil) == 1
        for part in parts where ok { ok = part.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, $0.count) } == 1 }
        var length: UInt32 = 0
        if ok { ok = EVP_DigestFinal_ex(context, &out, &length) == 1 && length == 32 }
        // Only a libcrypto without BLAKE2s gets here; nothing could be computed without it.
        precondition(ok, "OpenSSL's BLAKE2S-256 digest is unavailable")
        return out
    }

    /// HMAC(key, input) over BLAKE2s-256 (RFC 2104 with a 64-byte block), 32 bytes.
    static func hmac(key: [UInt8], _ input: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { k in
            input.withUnsafeBytes { i in
                HMAC(digest, k.baseAddress, Int32(k.count), i.baseAddress?.assumingMemoryBound(to: UInt8.self),
                     i.count, &out, &length)
            }
        }
        precondition(result != nil && length == 32, "OpenSSL's HMAC over BLAKE2S-256 failed")
        return out
    }

    /// KDFn(key, input) of the whitepaper §5.4: τ0 = HMAC(key, input), τ1 = HMAC(τ0, 0x1),
    /// τi = HMAC(τ0, τi−1 ‖ i); returns τ1…τn.
    static func kdf(_ count: Int, key: [UInt8], _ input: [UInt8]) -> [[UInt8]] {
        let prk = hmac(key: key, input)
        var outputs: [[UInt8]] = []
        var previous: [UInt8] = []
        for i in 1...count {
            previous = hmac(key: prk, previous + [UInt8(i)])
            outputs.append(previous)
        }
        return outputs
    }

    /// MAC(key, input): keyed BLAKE2s with a 16-byte output (the mac1 of §5.4.4), key 1…32 bytes.
    static func mac(key: [UInt8], _ input: ArraySlice<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 16)
        guard let context = EVP_MAC_CTX_new(keyedMAC) else { preconditionFailure("OpenSSL's BLAKE2SMAC is unavailable") }
        defer { EVP_MAC_CTX_free(context) }
        var size = 16
        var written = 0
        // OSSL_PARAM keeps the name's pointer, so it must outlive EVP_MAC_init: hence withCString.
        let ok = "size".withCString { name in
            withUnsafeMutablePointer(to: &size) { sizePointer in
                var params = [OSSL_PARAM_construct_size_t(name, sizePointer), OSSL_PARAM_construct_end()]
                return key.withUnsafeBytes { k in
                    EVP_MAC_init(context, k.baseAddress?.assumingMemoryBound(to: UInt8.self), k.count, &params) == 1
                }
            }
        } && input.withUnsafeBytes { EVP_MAC_update(context, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) == 1 }
            && EVP_MAC_final(context, &out, &written, 16) == 1 && written == 16
        precondition(ok, "OpenSSL's BLAKE2SMAC with a 16-byte output failed")
        return out
    }
}
