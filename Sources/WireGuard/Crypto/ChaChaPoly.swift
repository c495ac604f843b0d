import CTLS

/// AEAD(key, counter, plaintext, aad) of the whitepaper §5.4: ChaCha20-Poly1305 (RFC 7539) with a
/// 12-byte nonce of 4 zero bytes then the 64-bit counter little-endian, and a 16-byte tag.
///
/// One instance owns one EVP_CIPHER_CTX keyed once; each message only resets the nonce. Not
/// thread-safe: its owner serialises calls (a keypair keeps one per direction behind a lock).
final class ChaChaPoly {
    static let tagSize = 16
    private let context: OpaquePointer
    private let encrypting: Bool

    /// Nil when OpenSSL refuses the key (it is always 32 bytes here, so only on memory exhaustion).
    init?(key: [UInt8], encrypting: Bool) {
        guard key.count == 32, let context = EVP_CIPHER_CTX_new() else { return nil }
        self.context = context
        self.encrypting = encrypting
        let ok = encrypting
            ? EVP_EncryptInit_ex(context, EVP_chacha20_poly1305(), nil, key, nil) == 1
            : EVP_DecryptInit_ex(context, EVP_chacha20_poly1305(), nil, key, nil) == 1
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            return nil
        }
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    private static func nonce(_ counter: UInt64) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for i in 0..<8 { nonce[4 + i] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(i))) }
        return nonce
    }

    /// Encrypts `buffer[range]` in place and writes the tag into the 16 bytes after it.
    /// - Returns: false when OpenSSL fails (never for valid arguments).
    func seal(counter: UInt64, _ buffer: inout [UInt8], range: Range<Int>, aad: [UInt8] = []) -> Bool {
        precondition(encrypting && range.upperBound + Self.tagSize <= buffer.count)
        var length: Int32 = 0
        guard EVP_EncryptInit_ex(context, nil, nil, nil, Self.nonce(counter)) == 1 else { return false }
        if !aad.isEmpty { guard EVP_EncryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else { return false } }
        return buffer.withUnsafeMutableBytes { raw in
            let base = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let data = base + range.lowerBound
            guard range.isEmpty || EVP_EncryptUpdate(context, data, &length, data, Int32(range.count)) == 1,
                  EVP_EncryptFinal_ex(context, base + range.upperBound, &length) == 1 else { return false }
            return EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagSize), base + range.upperBound) == 1
        }
    }

    /// Decrypts `input[range]`, whose last 16 bytes are the tag, into a new array.
    /// - Returns: the plaintext, or nil when the tag does not authenticate.
    func open(counter: UInt64, _ input: [UInt8], range: Range<Int>, aad: [UInt8] = []) -> [UInt8]? {
        precondition(!encrypting)
        guard range.count >= Self.tagSize else { return nil }
        let textCount = range.count - Self.tagSize
        var out = [UInt8](repeating: 0, count: textCount)
        var length: Int32 = 0
        guard EVP_DecryptInit_ex(context, nil, nil, nil, Self.nonce(counter)) == 1 else { return nil }
        if !aad.isEmpty { guard EVP_DecryptUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 else { return nil } }
        let ok = input.withUnsafeBytes { raw -> Bool in
            let data = raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + range.lowerBound
            var tag = Array(UnsafeBufferPointer(start: data + textCount, count: Self.tagSize))
            guard textCount == 0 || EVP_DecryptUpdate(context, &out, &length, data, Int32(textCount)) == 1,
                  EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagSize), &tag) == 1 else { return false }
            return out.withUnsafeMutableBufferPointer { EVP_DecryptFinal_ex(context, $0.baseAddress! + textCount, &length) } == 1
        }
        guard ok else {
            ERR_clear_error()
            return nil
        }
        return out
    }

    /// One-shot AEAD for the handshake's fields: ciphertext ‖ tag.
    static func seal(key: [UInt8], counter: UInt64 = 0, _ plaintext: [UInt8], aad: [UInt8]) -> [UInt8] {
        guard let cipher = ChaChaPoly(key: key, encrypting: true) else { preconditionFailure("EVP_chacha20_poly1305 failed") }
        var buffer = plaintext + [UInt8](repeating: 0, count: tagSize)
        precondition(cipher.seal(counter: counter, &buffer, range: 0..<plaintext.count, aad: aad), "ChaCha20-Poly1305 failed")
        return buffer
    }

    /// One-shot AEAD opening for the handshake's fields; nil when the tag does not authenticate.
    static func open(key: [UInt8], counter: UInt64 = 0, _ sealed: ArraySlice<UInt8>, aad: [UInt8]) -> [UInt8]? {
        guard let cipher = ChaChaPoly(key: key, encrypting: false) else { return nil }
        return cipher.open(counter: counter, Array(sealed), range: 0..<sealed.count, aad: aad)
    }
}
