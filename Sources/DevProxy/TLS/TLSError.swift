import CertAuthority
import CTLS

/// Why a TLS operation failed.
public struct TLSError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        /// The peer sent an alert during the handshake (for a client: it rejected our certificate).
        case alertReceived = "alert_received"
        /// The upstream's certificate did not verify.
        case verifyFailed = "verify_failed"
        /// The peer closed the connection during the handshake.
        case closedDuringHandshake = "closed_during_handshake"
        /// The peer did not speak TLS.
        case notTLS = "not_tls"
        case timedOut = "timed_out"
        /// The origin asked for a client certificate, DevProxy had none for it (`--client-cert`),
        /// and the origin ended the handshake or the connection.
        case clientCertificateRequired = "client_certificate_required"
        case failed
    }

    public let kind: Kind
    public let message: String
    /// The alert's name in TLS spelling (`unknown_ca`), for `.alertReceived`.
    public let alert: String?
    /// For `.verifyFailed` because no issuer was found for the chain the origin sent: that chain,
    /// leaf first (`IssuerFetcher` may find the missing intermediate).
    var incompleteChain: [Certificate]? = nil
    /// For an upstream handshake that failed verification: what the flow still records (the
    /// chain the origin sent, the address dialled, the connect and TLS times), where it had
    /// nothing but the error (`UpstreamFailure.annotate`).
    var failedUpstream: FailedUpstream? = nil

    struct FailedUpstream: Sendable {
        var chain: [Certificate]
        var verifyError: String?
        var address: String? = nil
        var connectMilliseconds: Double = -1
        var tlsMilliseconds: Double = -1
    }
    /// The handshake had got past our certificate: the peer had it when it failed (our first
    /// flight was written and we were reading its answer, or further on).
    public var afterOurCertificate = false
    /// The peer's Finished had arrived: it accepted the handshake, and what failed came after
    /// (a write of ours, TLS 1.3's session tickets, met a peer that had already closed).
    public var peerFinished = false

    public init(_ kind: Kind, _ message: String, alert: String? = nil) {
        self.kind = kind
        self.message = message
        self.alert = alert
    }

    public var description: String { message }

    /// An origin that asked for a client certificate, got none and failed the connection
    /// (`after`: how it failed).
    static func clientCertificateRequired(peer: String, after error: TLSError) -> TLSError {
        TLSError(.clientCertificateRequired,
                 "\(peer) requires a client certificate and none is configured for it: give one with "
                    + "--client-cert \(peer)=FILE (PEM or .p12) (\(error.message))", alert: error.alert)
    }

    /// Classifies a failed handshake from OpenSSL's error queue (drained) and errno.
    static func handshake(ssl: OpaquePointer, result: Int32, savedErrno: Int32, peer: String) -> TLSError {
        var error = classify(ssl: ssl, result: result, savedErrno: savedErrno, peer: peer)
        var finished = [UInt8](repeating: 0, count: 64)
        error.peerFinished = SSL_get_peer_finished(ssl, &finished, finished.count) > 0
        error.afterOurCertificate = error.peerFinished || SSL_get_finished(ssl, &finished, finished.count) > 0
            || Self.statesAfterServerFlight.contains(SSL_get_state(ssl))
        return error
    }

    /// Server states reading the client's answer to our first flight (ServerHello … Certificate
    /// … ServerHelloDone or Finished), and the ones after it.
    private static let statesAfterServerFlight: Set<OSSL_HANDSHAKE_STATE> = [
        TLS_ST_SR_CERT, TLS_ST_SR_KEY_EXCH, TLS_ST_SR_CERT_VRFY, TLS_ST_SR_NEXT_PROTO, TLS_ST_SR_CHANGE,
        TLS_ST_SR_FINISHED, TLS_ST_SR_END_OF_EARLY_DATA, TLS_ST_SW_SESSION_TICKET, TLS_ST_OK,
    ]

    private static func classify(ssl: OpaquePointer, result: Int32, savedErrno: Int32, peer: String) -> TLSError {
        let code = SSL_get_error(ssl, result)
        let reasons = OpenSSLErrorQueue.drain()
        if let alertReason = reasons.first(where: { $0.contains(" alert ") }) {
            // OpenSSL names received alerts "tlsv1 alert unknown ca" / "sslv3 alert bad certificate".
            let name = alertReason.components(separatedBy: " alert ").last ?? alertReason
            let alert = name.replacingOccurrences(of: " ", with: "_")
            return TLSError(.alertReceived, "\(peer) sent TLS alert \(alert)", alert: alert)
        }
        if reasons.contains(where: { $0.contains("certificate verify failed") }) {
            let verify = X509_verify_cert_error_string(Int(SSL_get_verify_result(ssl)))
            return TLSError(.verifyFailed, "certificate verify failed: " + (verify.map { String(cString: $0) } ?? "unknown reason"))
        }
        if reasons.contains(where: { $0.contains("wrong version number") || $0.contains("http request") || $0.contains("unknown protocol") || $0.contains("record layer failure") || $0.contains("packet length too long") }) {
            return TLSError(.notTLS, "\(peer) did not speak TLS (\(reasons.joined(separator: "; ")))")
        }
        // A blocking socket's receive timeout (SO_RCVTIMEO) surfaces as "wants to read" with
        // EAGAIN: a peer that accepted TCP and never answered, reported as "failed: error 2".
        if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) && reasons.isEmpty {
            return TLSError(.timedOut, "TLS handshake with \(peer) timed out: no answer within the timeout")
        }
        if code == SSL_ERROR_SYSCALL || code == SSL_ERROR_ZERO_RETURN || reasons.contains(where: { $0.contains("unexpected eof") }) {
            if savedErrno == EAGAIN || savedErrno == EWOULDBLOCK {
                return TLSError(.timedOut, "TLS handshake with \(peer) timed out")
            }
            return TLSError(.closedDuringHandshake, "\(peer) closed the connection during the TLS handshake")
        }
        return TLSError(.failed, "TLS handshake with \(peer) failed: " + (reasons.isEmpty ? "error \(code)" : reasons.joined(separator: "; ")))
    }
}
