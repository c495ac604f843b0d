import CTLS

/// One client `SSL` on a non-blocking socket; frees it in `deinit`. Used by one thread at a time.
final class TLSStream {
    private let ssl: OpaquePointer

    /// Outcome of a non-blocking TLS step; `wantRead`/`wantWrite` are states, not errors.
    enum Step {
        case done(Int)
        case wantRead
        case wantWrite
        case closed
        case failed(String)
    }

    /// Takes ownership of `ssl`: it is freed with this object.
    init(takingOwnership ssl: OpaquePointer) {
        self.ssl = ssl
    }

    deinit {
        SSL_free(ssl)
    }

    /// Advances the client handshake.
    func handshake() -> Step {
        clearErrorQueue()
        let rc = SSL_connect(ssl)
        if rc == 1 { return .done(0) }
        return classify(rc, verifying: true)
    }

    /// Reads decrypted bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Step {
        clearErrorQueue()
        let rc = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if rc > 0 { return .done(Int(rc)) }
        return classify(rc, verifying: false)
    }

    /// The protocol the server chose in ALPN, nil when it chose none.
    var selectedALPN: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Whether OpenSSL holds input it has read from the socket but not yet returned —
    /// decrypted or not (read-ahead) — which `poll` cannot see.
    var hasBufferedInput: Bool {
        SSL_has_pending(ssl) == 1
    }

    /// Writes plaintext; may write part of it (partial-write mode).
    func write(_ buffer: UnsafeRawBufferPointer) -> Step {
        clearErrorQueue()
        let rc = SSL_write(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if rc > 0 { return .done(Int(rc)) }
        return classify(rc, verifying: false)
    }

    /// Empties this thread's error queue, so `SSL_get_error` judges the next call alone.
    ///
    /// Peeks first: `ERR_clear_error` resets all 16 slots of the queue (~400 instructions), which
    /// on every read and write showed in profiles, while the queue is almost always empty already.
    /// `SSL_get_error` itself only peeks, so an empty queue is all it needs.
    private func clearErrorQueue() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// Maps `SSL_get_error` to a step, naming the verification failure when there is one.
    private func classify(_ rc: Int32, verifying: Bool) -> Step {
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            let queued = OpenSSLErrors.drain()
            return queued == "no OpenSSL error" ? .closed : .failed(queued)
        default:
            var reason = OpenSSLErrors.drain()
            if verifying {
                let verify = SSL_get_verify_result(ssl)
                if verify != X509_V_OK {
                    reason = "certificate verify failed: \(String(cString: X509_verify_cert_error_string(verify))); " + reason
                }
            }
            return .failed(reason)
        }
    }
}
