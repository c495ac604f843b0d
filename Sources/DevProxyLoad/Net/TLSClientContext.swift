import CTLS

/// The one `SSL_CTX` of a run: TLS 1.2+ client, verifying peers against `--cafile` unless `--insecure`.
///
/// Shared read-only by all worker threads once built (OpenSSL allows concurrent `SSL_new`).
/// No session resumption: `newconn` measures full handshakes, the proxy's worst case.
final class TLSClientContext: @unchecked Sendable {  // SSL_CTX is thread-safe once configured
    private let context: OpaquePointer
    /// Whether `SSL_VERIFY_PEER` and host name checks are on.
    let verifies: Bool

    /// Builds the context.
    /// - Parameters:
    ///   - caFile: PEM roots to trust; nil uses the system store.
    ///   - insecure: skip verification entirely.
    ///   - alpn: protocols to offer in ALPN, most preferred first; none when empty.
    /// - Throws: `SetupError` when the CA file cannot be loaded.
    init(caFile: String?, insecure: Bool, alpn: [String] = []) throws(SetupError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw SetupError(description: "SSL_CTX_new failed: \(OpenSSLErrors.drain())")
        }
        self.context = context
        self.verifies = !insecure
        _ = CTLS_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        _ = CTLS_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
        // Partial writes plus a moving buffer let a retried SSL_write resume from any Swift array.
        _ = CTLS_SSL_CTX_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        if !alpn.isEmpty {
            // The wire form: each name preceded by its length (RFC 7301 §3.1).
            let wire = alpn.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
            // SSL_CTX_set_alpn_protos returns 0 on success, unlike most of OpenSSL.
            guard SSL_CTX_set_alpn_protos(context, wire, UInt32(wire.count)) == 0 else {
                throw SetupError(description: "cannot set ALPN: \(OpenSSLErrors.drain())")
            }
        }
        if insecure {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            return
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        let loaded: Int32
        if let caFile {
            loaded = SSL_CTX_load_verify_locations(context, caFile, nil)
        } else {
            loaded = SSL_CTX_set_default_verify_paths(context)
        }
        guard loaded == 1 else {
            throw SetupError(description: "cannot load CA file \(caFile ?? "(system)"): \(OpenSSLErrors.drain()); "
                + "pass --cafile with a PEM root, or --insecure")
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A new client `SSL` on `fd` with SNI and (when verifying) the expected host name set.
    /// - Throws: `LoadError(.tls)` when OpenSSL cannot allocate it.
    func makeStream(fd: Int32, serverName: String, largeReads: Bool) throws(LoadError) -> TLSStream {
        ERR_clear_error()
        guard let ssl = SSL_new(context) else {
            throw LoadError(kind: .tls, reason: "SSL_new: \(OpenSSLErrors.drain())")
        }
        let stream = TLSStream(takingOwnership: ssl)
        SSL_set_connect_state(ssl)
        guard SSL_set_fd(ssl, fd) == 1 else { throw LoadError(kind: .tls, reason: "SSL_set_fd: \(OpenSSLErrors.drain())") }
        let isIPLiteral = serverName.allSatisfy { $0.isNumber || $0 == "." }
        if !isIPLiteral { _ = CTLS_SSL_set_tlsext_host_name(ssl, serverName) }
        if verifies {
            guard SSL_set1_host(ssl, serverName) == 1 else {
                throw LoadError(kind: .tls, reason: "SSL_set1_host: \(OpenSSLErrors.drain())")
            }
        }
        // Read-ahead: one read(2) takes every record the kernel holds, where OpenSSL would
        // otherwise read each record's 5-byte header and its body with two calls. Bytes it
        // buffers are invisible to poll(), so callers ask `hasBufferedInput` before waiting.
        SSL_set_read_ahead(ssl, 1)
        if largeReads {
            // A 256 KiB buffer lets one read(2) fill many records when streaming.
            SSL_set_default_read_buffer_len(ssl, 256 * 1024)
        }
        return stream
    }
}
