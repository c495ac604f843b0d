import CertAuthority
import CTLS
import Foundation

/// An SSL_CTX, owned exclusively. Built once and shared by every connection of one kind:
/// `SSL_CTX_new` costs ~150 µs, so contexts are never made per connection.
public final class TLSContext: @unchecked Sendable {
    // Read-only after init; OpenSSL allows concurrent SSL_new on a finished context.
    let pointer: OpaquePointer
    /// For client contexts: whether the peer's certificate must verify.
    public let verifiesPeer: Bool

    private init(pointer: OpaquePointer, verifiesPeer: Bool) {
        self.pointer = pointer
        self.verifiesPeer = verifiesPeer
    }

    deinit { SSL_CTX_free(pointer) }

    /// The context that terminates clients' TLS: TLS 1.2 and 1.3, ALPN limited to `http/1.1`
    /// (until HTTP/2 is supported), the per-host leaf set on each connection.
    public static func server() throws -> TLSContext {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError(.failed, "SSL_CTX_new failed") }
        let result = TLSContext(pointer: context, verifiesPeer: false)
        try configureCommon(context)
        SSL_CTX_set_alpn_select_cb(context, { _, out, outLength, input, inputLength, _ in
            // Pick http/1.1 if offered; otherwise no ALPN (the client falls back to HTTP/1.1).
            guard let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
            var index = 0
            while index < Int(inputLength) {
                let length = Int(input[index])
                let start = index + 1
                if start + length <= Int(inputLength), length == 8,
                   Array(UnsafeBufferPointer(start: input + start, count: 8)) == Array("http/1.1".utf8) {
                    out.pointee = input + start
                    outLength.pointee = UInt8(length)
                    return SSL_TLSEXT_ERR_OK
                }
                index = start + length
            }
            return SSL_TLSEXT_ERR_NOACK
        }, nil)
        return result
    }

    /// The context for upstream connections: the system trust store plus `extraCAs`, peer
    /// verification unless `insecure`, ALPN `http/1.1`.
    public static func client(extraCAs: [Certificate], insecure: Bool) throws -> TLSContext {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError(.failed, "SSL_CTX_new failed") }
        let result = TLSContext(pointer: context, verifiesPeer: !insecure)
        try configureCommon(context)
        guard SSL_CTX_set_default_verify_paths(context) == 1 else { throw TLSError(.failed, "cannot load the system trust store") }
        let store = SSL_CTX_get_cert_store(context)
        for ca in extraCAs {
            ca.withX509 { _ = X509_STORE_add_cert(store, $0) }
        }
        ERR_clear_error()
        SSL_CTX_set_verify(context, insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nil)
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        _ = SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count))
        // Sessions are kept by TLSSessionCacheStore (bounded, one per upstream); OpenSSL's own
        // store would keep every one of them too (up to 20,480, each with the server's chain).
        _ = CTLS_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        return result
    }

    private static func configureCommon(_ context: OpaquePointer) throws {
        guard CTLS_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw TLSError(.failed, "cannot set the minimum TLS version")
        }
        SSL_CTX_set_options(context, CTLS_SSL_OP_NO_COMPRESSION() | CTLS_SSL_OP_NO_RENEGOTIATION() | CTLS_SSL_OP_IGNORE_UNEXPECTED_EOF())
        _ = CTLS_SSL_CTX_set_mode(context, Int(SSL_MODE_AUTO_RETRY | SSL_MODE_RELEASE_BUFFERS))
        if KeyLog.isEnabled { KeyLog.install(on: context) }
    }
}
