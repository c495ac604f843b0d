import CertAuthority
import CTLS
import Foundation

/// One TLS session over a connected socket (SSL on the descriptor), owned exclusively.
///
/// Belongs to one thread at a time: TLS 1.3's SSL_read may write (key updates, tickets).
public final class TLSConnection: @unchecked Sendable {
    private let ssl: OpaquePointer
    public let socket: Socket
    private let peerName: String
    /// What a server connection may answer in ALPN; read by the context's callback.
    private var alpnPreference: ALPNPreference?

    private init(ssl: OpaquePointer, socket: Socket, peerName: String) {
        self.ssl = ssl
        self.socket = socket
        self.peerName = peerName
    }

    deinit { SSL_free(ssl) }

    /// Terminates a client's TLS with `leaf` (plus its chain) and completes the handshake.
    ///
    /// - Parameter alpn: the protocols this connection may answer in ALPN, most preferred first.
    /// - Parameter received: bytes of the handshake already read off the socket (a ClientHello
    ///   the client sent with its CONNECT or SOCKS5 request), read before the socket's.
    /// - Throws: `TLSError` (`.alertReceived` when the client rejects the certificate).
    public static func accept(socket: Socket, context: TLSContext, leaf: Leaf, peerName: String,
                              alpn: ALPNPreference = .http11, received: [UInt8] = []) throws -> TLSConnection {
        OpenSSLErrorQueue.clear()
        guard let ssl = SSL_new(context.pointer) else { throw TLSError(.failed, "SSL_new failed") }
        let connection = TLSConnection(ssl: ssl, socket: socket, peerName: peerName)
        // The context's ALPN callback reads it from the SSL; the connection keeps it alive.
        connection.alpnPreference = alpn
        _ = CTLS_SSL_set_app_data(ssl, Unmanaged.passUnretained(alpn).toOpaque())
        let installed = leaf.certificate.withX509 { SSL_use_certificate(ssl, $0) } == 1
            && leaf.key.withEVPPKey { SSL_use_PrivateKey(ssl, $0) } == 1
            && leaf.chain.allSatisfy { certificate in certificate.withX509 { CTLS_SSL_add1_chain_cert(ssl, $0) } == 1 }
        guard installed, connection.attachBufferedSocket() else {
            throw TLSError(.failed, "cannot install the leaf: \(OpenSSLErrorQueue.drain().joined(separator: "; "))")
        }
        if !received.isEmpty {
            // BIO_set_buffer_read_data: the buffer BIO hands these out before reading the socket.
            let loaded = received.withUnsafeBytes { bytes in
                BIO_ctrl(SSL_get_rbio(ssl), BIO_C_SET_BUFF_READ_DATA, bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            }
            guard loaded == 1 else { throw TLSError(.failed, "cannot hand the ClientHello already read to TLS") }
        }
        let result = SSL_accept(ssl)
        guard result == 1 else { throw TLSError.handshake(ssl: ssl, result: result, savedErrno: errno, peer: peerName) }
        return connection
    }

    /// Opens TLS to an upstream server: SNI = `serverName` (unless an IP literal), hostname
    /// verified when the context verifies.
    ///
    /// - Parameter alpn: the protocols to offer, in the client's order; nil offers the
    ///   context's (`http/1.1`).
    /// - Throws: `TLSError` (`.verifyFailed` with OpenSSL's reason).
    /// - Parameter clientCertificates: the `--client-cert` rules; the origin's CertificateRequest,
    ///   if any, is answered from them and recorded (`clientCertificate`).
    public static func connect(socket: Socket, context: TLSContext, serverName: String,
                               session: TLSSessionCache? = nil, alpn: [String]? = nil,
                               clientCertificates: [ClientCertificateRule] = []) throws -> TLSConnection {
        OpenSSLErrorQueue.clear()
        try context.loadDeferredTrust()
        guard let ssl = SSL_new(context.pointer) else { throw TLSError(.failed, "SSL_new failed") }
        let connection = TLSConnection(ssl: ssl, socket: socket, peerName: serverName)
        let request = ClientCertificateRequest(host: serverName, rules: clientCertificates)
        request.install(on: ssl)
        connection.clientCertificate = request
        if let alpn {
            let wire = ALPNPreference.wireFormat(alpn)
            // SSL_set_alpn_protos returns 0 on success (unlike most of OpenSSL).
            guard SSL_set_alpn_protos(ssl, wire, UInt32(wire.count)) == 0 else { throw TLSError(.failed, "cannot set ALPN") }
        }
        let isIP = CertAuthority.LeafName.isIPLiteral(serverName)
        // A fully qualified name's final dot (`localhost.`) is not part of the name a certificate
        // holds or SNI carries (RFC 6066 §3): with it, every origin failed "hostname mismatch".
        let name = serverName.hasSuffix(".") && !isIP ? String(serverName.dropLast()) : serverName
        if !isIP { _ = CTLS_SSL_set_tlsext_host_name(ssl, name) }
        // Hostname checks run even when not enforced, so an insecure flow still records
        // whether the name matched.
        if isIP {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
        } else {
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            _ = SSL_set1_host(ssl, name)
        }
        session?.resume(ssl)
        guard connection.attachBufferedSocket() else { throw TLSError(.failed, "cannot attach the socket") }
        let result = SSL_connect(ssl)
        guard result == 1 else {
            var error = TLSError.handshake(ssl: ssl, result: result, savedErrno: errno, peer: serverName)
            if error.kind == .verifyFailed, SSL_get_verify_result(ssl) == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY {
                error.incompleteChain = connection.peerChain
            }
            if error.kind == .verifyFailed {
                let reason = X509_verify_cert_error_string(Int(SSL_get_verify_result(ssl))).map { String(cString: $0) }
                error.failedUpstream = TLSError.FailedUpstream(chain: connection.peerChain, verifyError: reason)
            }
            guard request.missing, error.kind != .verifyFailed, error.kind != .timedOut else { throw error }
            throw TLSError.clientCertificateRequired(peer: serverName, after: error)
        }
        if connection.sessionReused, let session { connection.resumedClientIdentity = session.clientIdentity() }
        connection.sessionCache = session
        connection.rememberSession()
        return connection
    }

    /// Reads decrypted bytes; 0 means the peer closed (close_notify or TCP EOF).
    ///
    /// - Throws: `NetworkError` (`.timedOut`, `.reset`) or `TLSError`.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            if let count = try readAvailable(into: buffer) { return count }
            // On a blocking socket SSL_read (SSL_MODE_AUTO_RETRY) wants more only when the
            // socket's receive timeout passed: that was the wait. Waiting again here doubled it
            // (an origin silent for 60 s answered 504 after 120).
            guard socket.isNonBlocking else { throw NetworkError(.timedOut, "reading from \(peerName) timed out") }
            try socket.wait(for: Int16(POLLIN))
        }
    }

    /// Reads without waiting when the socket is non-blocking: nil when no application data is
    /// available yet (TLS 1.3 tickets and key updates are consumed silently).
    public func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? {
        try attachBuffersIfReleased()
        OpenSSLErrorQueue.clear()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if count > 0 { return Int(count) }
        let savedErrno = errno
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_ZERO_RETURN:
            return 0
        case SSL_ERROR_WANT_READ:
            return nil
        case SSL_ERROR_WANT_WRITE:
            try socket.wait(for: Int16(POLLOUT))
            return nil
        case SSL_ERROR_SYSCALL where savedErrno == EAGAIN || savedErrno == EWOULDBLOCK:
            throw NetworkError(.timedOut, "reading from \(peerName) timed out")
        case SSL_ERROR_SYSCALL where savedErrno == ECONNRESET:
            throw NetworkError(.reset, "\(peerName) reset the connection")
        case SSL_ERROR_SYSCALL:
            // SSL_OP_IGNORE_UNEXPECTED_EOF makes a bare TCP FIN read as a clean end.
            return 0
        default:
            let reasons = OpenSSLErrorQueue.drain()
            throw TLSError(.failed, "TLS read from \(peerName) failed: \(reasons.joined(separator: "; "))")
        }
    }

    /// Writes all of `bytes`. With `flush: false` the records may wait in the write buffer for
    /// the next write or `flush()` (the relay does that while more of a body is already in); a
    /// full buffer goes out by itself.
    public func write(_ bytes: UnsafeRawBufferPointer, flush: Bool) throws {
        try attachBuffersIfReleased()
        var offset = 0
        while offset < bytes.count {
            OpenSSLErrorQueue.clear()
            let count = SSL_write(ssl, bytes.baseAddress! + offset, Int32(min(bytes.count - offset, Int(Int32.max))))
            if count > 0 { offset += Int(count); continue }
            let savedErrno = errno
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_WRITE: try socket.waitToWrite()
            case SSL_ERROR_WANT_READ: try socket.wait(for: Int16(POLLIN))
            case SSL_ERROR_SYSCALL where savedErrno == EAGAIN || savedErrno == EWOULDBLOCK:
                if socket.writeMayWaitLonger { continue }
                throw NetworkError(.timedOut, "writing to \(peerName) timed out")
            default:
                OpenSSLErrorQueue.clear()
                throw NetworkError(.reset, "\(peerName) closed the connection while we were writing")
            }
        }
        if flush { try self.flush() }
    }

    /// Sends what the write buffer holds.
    public func flush() throws {
        guard let bio = SSL_get_wbio(ssl) else { return }
        while CTLS_BIO_wpending(bio) > 0 {
            if CTLS_BIO_flush(bio) > 0 { return }
            guard CTLS_BIO_should_retry(bio) != 0 else {
                OpenSSLErrorQueue.clear()
                throw NetworkError(.reset, "\(peerName) closed the connection while we were writing")
            }
            try socket.waitToWrite()
        }
    }

    /// Whether a read returns data without waiting on the network: a decrypted record is held,
    /// or the next whole record is in the read buffer or the kernel's receive queue.
    public var inputReady: Bool {
        if SSL_pending(ssl) > 0 { return true }
        guard let bio = SSL_get_rbio(ssl) else { return false }
        var header = (UInt8(0), UInt8(0), UInt8(0), UInt8(0), UInt8(0))
        let buffered = Int(BIO_ctrl_pending(bio))
        let headerBytes: Int
        if buffered >= 5 {
            headerBytes = withUnsafeMutableBytes(of: &header) { Int(CTLS_BIO_buffer_peek(bio, $0.baseAddress, 5)) }
        } else if buffered == 0 {
            headerBytes = withUnsafeMutableBytes(of: &header) { recv(socket.fd, $0.baseAddress, 5, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        } else {
            return false
        }
        guard headerBytes == 5 else { return false }
        // TLS record header: type, version (2), length (2).
        let record = 5 + (Int(header.3) << 8 | Int(header.4))
        if buffered >= record { return true }
        return buffered + socket.queuedBytes >= record
    }

    /// Reads what an idle connection has received, without waiting, and says whether it was only
    /// TLS's own messages, leaving the connection usable: the session tickets a TLS 1.3 server
    /// sends after the handshake (unread on a connection opened ahead of its first request), or
    /// a key update. False for application data, close_notify, EOF or an error.
    public func consumeIdleInput() -> Bool {
        var byte: UInt8 = 0
        do {
            // nil: nothing for the application arrived, only what OpenSSL consumed itself.
            let read = try socket.withoutBlocking {
                try withUnsafeMutableBytes(of: &byte) { try readAvailable(into: $0) }
            }
            return read == nil
        } catch {
            return false
        }
    }

    /// Up to four full records per `read`. Allocated whole, but only the pages that data
    /// reaches become resident, so an idle connection costs no more than with a 17 KiB buffer.
    private static let readBufferSize = 64 * 1024
    /// Four full records per `write`.
    private static let writeBufferSize = 64 * 1024

    /// Both directions go through one buffer BIO over the socket: a read takes in as many
    /// records as have arrived (OpenSSL alone reads each record's header and body separately),
    /// and records written with `flush: false` leave together (a streamed body). OpenSSL
    /// flushes it after handshake messages and alerts, `write(_:flush:)` after application data.
    private func attachBufferedSocket() -> Bool {
        guard let socketBIO = BIO_new_socket(socket.fd, BIO_NOCLOSE) else { return false }
        guard let buffer = BIO_new(BIO_f_buffer()) else {
            BIO_free(socketBIO)
            return false
        }
        guard CTLS_BIO_set_write_buffer_size(buffer, Self.writeBufferSize) == 1,
              CTLS_BIO_set_read_buffer_size(buffer, Self.readBufferSize) == 1 else {
            BIO_free(buffer)
            BIO_free(socketBIO)
            return false
        }
        _ = BIO_push(buffer, socketBIO)
        // One BIO for both directions, as SSL_set_fd does with a bare socket BIO (given the same
        // BIO twice, SSL_set_bio takes our one reference and adds its second itself). The chain
        // it replaces, if any, is freed.
        SSL_set_bio(ssl, buffer, buffer)
        buffersReleased = false
        return true
    }

    /// Whether the connection idles on a bare socket BIO (see `releaseBuffers`).
    public private(set) var buffersReleased = false

    /// Gives back the read and write buffers while the connection idles (a pooled upstream, a
    /// keep-alive client between requests); the next read or write attaches fresh ones.
    ///
    /// 128 KiB of heap each, plus OpenSSL's ~34 KiB of record buffers: after a burst of
    /// connections to many hosts, the idle ones kept most of it resident. Only when both buffers
    /// are empty, so no byte is lost or reordered.
    public func releaseBuffers() {
        guard !buffersReleased, SSL_pending(ssl) == 0, let bio = SSL_get_rbio(ssl),
              BIO_ctrl_pending(bio) == 0, CTLS_BIO_wpending(bio) == 0,
              let socketBIO = BIO_new_socket(socket.fd, BIO_NOCLOSE) else { return }
        SSL_set_bio(ssl, socketBIO, socketBIO)
        // OpenSSL's own record buffers too; its next read or write allocates them again. (It
        // refuses while a record is half read, and keeps them: nothing is lost either way.)
        _ = SSL_free_buffers(ssl)
        buffersReleased = true
    }

    private func attachBuffersIfReleased() throws {
        guard buffersReleased else { return }
        guard attachBufferedSocket() else { throw TLSError(.failed, "cannot allocate TLS buffers for \(peerName)") }
    }

    /// Bytes already read from the socket and waiting (decrypted, or still in the read
    /// buffer): poll() on the socket cannot see them.
    public var pending: Int { Int(SSL_pending(ssl)) + (SSL_get_rbio(ssl).map { Int(BIO_ctrl_pending($0)) } ?? 0) }

    /// Where an upstream connection's session is remembered for the next connection.
    private var sessionCache: TLSSessionCache?

    /// Stores the session for resumption when it can be resumed. TLS 1.3 sends its tickets after
    /// the handshake, so the session right after `connect` usually cannot: this runs again when
    /// the connection goes back to the pool and when it closes, once tickets have arrived.
    public func rememberSession() {
        guard let sessionCache, let session = SSL_get_session(ssl), SSL_SESSION_is_resumable(session) == 1 else { return }
        sessionCache.store(ssl, clientIdentity: clientIdentity)
    }

    /// The origin's request for a client certificate and DevProxy's answer (upstream connections).
    private(set) var clientCertificate: ClientCertificateRequest?
    /// The identity of the session this connection resumed: a resumed handshake has no
    /// CertificateRequest, the origin still knows the client by the certificate first presented.
    private var resumedClientIdentity: ClientIdentity?

    /// The client certificate this connection authenticated with, in its own handshake or in the
    /// one of the session it resumed.
    public var clientIdentity: ClientIdentity? { clientCertificate?.presented ?? resumedClientIdentity }

    /// The origin asked for a client certificate and DevProxy had none for it (an empty
    /// Certificate message went): the origin's failure that follows is
    /// `upstream_client_certificate_required`.
    public var clientCertificateMissing: Bool { clientCertificate?.missing == true }

    /// Whether the handshake resumed a stored session.
    public var sessionReused: Bool { SSL_session_reused(ssl) == 1 }

    /// Sends close_notify, then a FIN; reading goes on. A relayed WebSocket or tunnel whose
    /// origin ended cleanly ended the client's TLS with a bare FIN, which clients read as a cut
    /// ("unexpected eof"; OpenSSL's s_client answered with a decode_error alert that the relay then
    /// recorded as a failure).
    public func closeWrite() {
        if SSL_is_init_finished(ssl) == 1 { SSL_shutdown(ssl) }
        try? flush()
        ERR_clear_error()
        socket.shutdownWrite()
    }

    /// Sends close_notify (best effort, never blocks for the peer's reply).
    public func close() {
        rememberSession()
        try? flush()
        if SSL_is_init_finished(ssl) == 1 { SSL_shutdown(ssl) }
        ERR_clear_error()
        socket.close()
    }

    /// `TLSv1.3`, `TLSv1.2`.
    public var version: String { String(cString: SSL_get_version(ssl)) }

    /// The negotiated cipher suite's name.
    public var cipher: String { SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } ?? "" }

    /// The negotiated ALPN protocol, if any.
    public var alpn: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The SNI the client sent (server side).
    public var serverName: String? {
        SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
    }

    /// Whether the peer's chain verified, and OpenSSL's reason when it did not.
    public var verification: (verified: Bool, reason: String?) {
        let result = SSL_get_verify_result(ssl)
        guard result != X509_V_OK else { return (SSL_get0_peer_certificate(ssl) != nil, nil) }
        return (false, X509_verify_cert_error_string(result).map { String(cString: $0) })
    }

    /// The certificates the peer sent, leaf first.
    public var peerChain: [Certificate] {
        guard let stack = SSL_get_peer_cert_chain(ssl) else { return [] }
        return (0..<CTLS_sk_X509_num(stack)).compactMap { index in
            CTLS_sk_X509_value(stack, index).map { Certificate(copying: $0) }
        }
    }
}
