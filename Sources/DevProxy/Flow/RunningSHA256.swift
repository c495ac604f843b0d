import CertAuthority
import CTLS

/// SHA-256 over bytes that arrive in pieces: owns one `EVP_MD_CTX` and frees it in `deinit`.
final class RunningSHA256 {
    /// The hex digest of no bytes at all.
    static let emptyHex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    private let context: OpaquePointer

    init() {
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("OpenSSL could not allocate a digest context") }
        self.context = context
        // A digest that OpenSSL's default provider always has: failing here means a broken
        // OpenSSL installation, which the CA code would already have hit.
        guard EVP_DigestInit_ex(context, FetchedSHA256.shared.digest, nil) == 1 else {
            EVP_MD_CTX_free(context)
            preconditionFailure("OpenSSL could not start a SHA-256 digest")
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Hashes `bytes` after those already seen.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, base, bytes.count) == 1 else {
            preconditionFailure("OpenSSL failed to update a SHA-256 digest")
        }
    }

    /// The digest of everything seen, as lowercase hex. Call once.
    func finishHex() -> String {
        var digest = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))   // SHA-256's 32 bytes
        var length: UInt32 = 0
        return withUnsafeMutableBytes(of: &digest) { digest in
            guard EVP_DigestFinal_ex(context, digest.baseAddress, &length) == 1, length == 32 else {
                preconditionFailure("OpenSSL failed to finish a SHA-256 digest")
            }
            return UnsafeRawBufferPointer(digest).hex
        }
    }
}

/// SHA-256 fetched from the default provider once: OpenSSL 3 otherwise repeats the provider
/// lookup (under a lock) in every `EVP_DigestInit_ex`, which shows with many small bodies.
private final class FetchedSHA256: @unchecked Sendable {
    // @unchecked: an EVP_MD is immutable once fetched and OpenSSL documents it as shareable.
    static let shared = FetchedSHA256()

    let digest: OpaquePointer

    private init() {
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else {
            preconditionFailure("OpenSSL's default provider has no SHA-256")
        }
        self.digest = digest
    }

    deinit { EVP_MD_free(digest) }
}
