import CTLS
import Foundation

/// A detached ECDSA P-256 signature with SHA-256 over a file's exact bytes: DER `ECDSA-Sig-Value`
/// (RFC 3279 §2.2.3), the form `openssl dgst -sha256 -sign` writes and `-verify` reads, and what
/// Apple's `SecKeyVerifySignature` takes as `.ecdsaSignatureMessageX962SHA256`.
public enum DetachedSignature {
    /// Signs `message` with `key`.
    ///
    /// - Throws: `.invalidInput` when the key is not EC P-256, `.openSSL` when signing fails.
    public static func sign(_ message: [UInt8], with key: PrivateKey) throws -> [UInt8] {
        guard key.algorithmDescription == "EC P-256" else {
            throw CAError(.invalidInput, "the signing key is \(key.algorithmDescription); pin sets are signed with an "
                          + "EC P-256 key (make one: openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 "
                          + "-out pinset-sign.key)")
        }
        OpenSSLErrorQueue.clear()
        guard let context = EVP_MD_CTX_new() else { throw CAError.openSSL("allocating a digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            throw CAError.openSSL("starting the signature")
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw CAError.openSSL("sizing the signature")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw CAError.openSSL("signing")
        }
        return Array(signature.prefix(length))
    }

    /// Whether `signature` is `spkiDER`'s key's signature of `message`.
    ///
    /// - Throws: `.corruptKey` when the SPKI does not decode.
    public static func verify(_ signature: [UInt8], of message: [UInt8], spkiDER: [UInt8]) throws -> Bool {
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        let key: OpaquePointer? = spkiDER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { throw CAError(.corruptKey, "the verification key does not decode") }
        defer { EVP_PKEY_free(key) }
        guard let context = EVP_MD_CTX_new() else { throw CAError.openSSL("allocating a digest context") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
    }
}
