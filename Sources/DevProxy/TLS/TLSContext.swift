import CertAuthority
import CTLS
import Foundation
import Synchronization

/// An SSL_CTX, owned exclusively. Built once and shared by every connection of one kind:
/// `SSL_CTX_new` costs ~150 µs, so contexts are never made per connection.
public final class TLSContext: @unchecked Sendable {
    // Read-only after init (but for the deferred trust's one load, done before any connection
    // uses it); OpenSSL allows concurrent SSL_new on a finished context.
    let pointer: OpaquePointer
    /// For client contexts: whether the peer's certificate must verify.
    public let verifiesPeer: Bool
    /// True for a client context on OpenSSL's defaults until they are read, at the first
    /// connection (`loadDeferredTrust`). With a CA bundle file (`SSL_CERT_FILE`, or no hashed
    /// directory, as with Homebrew's OpenSSL) OpenSSL parses every root at once, ~140 of them:
    /// ~230 M instructions and ~0.8 MiB of heap that a proxy nobody uses yet need not spend at start-up.
    private let trustPending: Mutex<Bool>
    /// For client contexts: intermediates origins left out, fetched into this context's store.
    let issuers = IssuerFetcher()

    private init(pointer: OpaquePointer, verifiesPeer: Bool, defersTrust: Bool = false) {
        self.pointer = pointer
        self.verifiesPeer = verifiesPeer
        self.trustPending = Mutex(defersTrust)
    }

    /// Reads OpenSSL's default trust into a client context made with `.openSSLDefaults`, once;
    /// every connection calls it before its `SSL_new`, so no handshake runs before it is done.
    /// - Throws: `TLSError(.failed)` when OpenSSL cannot read them (tried again next time).
    func loadDeferredTrust() throws {
        try trustPending.withLock { pending in
            guard pending else { return }
            guard SSL_CTX_set_default_verify_paths(pointer) == 1 else {
                ERR_clear_error()
                throw TLSError(.failed, "cannot load the system trust store (OpenSSL's default CA file and directory)")
            }
            ERR_clear_error()
            pending = false
        }
    }

    /// Adds the intermediate `chain` (as an origin sent it) lacks to this context's store, fetched
    /// from the URL its top certificate names (`IssuerFetcher`).
    /// - Returns: that URL.
    /// - Throws: `TLSError(.verifyFailed)` saying why the chain stays incomplete.
    func fetchMissingIssuer(of chain: [Certificate], proxy: UpstreamProxy?, forbidden: [SocketAddress]) throws -> String {
        try issuers.complete(chain, into: SSL_CTX_get_cert_store(pointer), proxy: proxy, forbidden: forbidden)
    }

    /// Certificates and CRLs the context's store holds now (tests: whether the defaults were read).
    var storedObjectCount: Int {
        guard let objects = X509_STORE_get0_objects(SSL_CTX_get_cert_store(pointer)) else { return 0 }
        return Int(OPENSSL_sk_num(objects))
    }

    deinit { SSL_CTX_free(pointer) }

    /// What the client-facing listener offers.
    public enum ServerProfile: Sendable, CaseIterable {
        /// TLS 1.2 and 1.3, OpenSSL's default TLS 1.2 suites (ECDHE first).
        case standard
        /// At most TLS 1.2 (the `tls12` persona).
        case tls12
        /// TLS 1.2 with RSA key exchange only, `AES128-GCM-SHA256:AES256-GCM-SHA384` (the
        /// `no-forward-secrecy` persona; its leaf carries an RSA key).
        case rsaKeyExchange
    }

    /// The context that terminates clients' TLS: TLS 1.2 and 1.3 (or what `profile` allows), the
    /// per-host leaf and the protocols to answer in ALPN set on each connection.
    public static func server(profile: ServerProfile = .standard) throws -> TLSContext {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TLSError(.failed, "SSL_CTX_new failed") }
        let result = TLSContext(pointer: context, verifiesPeer: false)
        try configureCommon(context)
        if profile != .standard {
            guard CTLS_SSL_CTX_set_max_proto_version(context, TLS1_2_VERSION) == 1 else {
                throw TLSError(.failed, "cannot set the maximum TLS version")
            }
        }
        if profile == .rsaKeyExchange {
            guard SSL_CTX_set_cipher_list(context, "AES128-GCM-SHA256:AES256-GCM-SHA384") == 1 else {
                throw TLSError(.failed, "cannot limit the cipher list to RSA key exchange")
            }
        }
        // Our order, not the client's: curl and Python offer OpenSSL's AES-256 first, phones
        // AES-128. A client that puts ChaCha20 first (no AES hardware) still gets ChaCha20.
        SSL_CTX_set_options(context, CTLS_SSL_OP_CIPHER_SERVER_PREFERENCE() | CTLS_SSL_OP_PRIORITIZE_CHACHA())
        try setTLS13Suites(context, serverOrder)
        // One TLS 1.3 session ticket per connection, not OpenSSL's two: clients resume with one
        // (OkHttp, Chrome), and each costs ~0.1 ms before the first request can be read.
        _ = SSL_CTX_set_num_tickets(context, 1)
        // Each connection says which protocols it may answer, in its order of preference
        // (`ALPNPreference`, set by `TLSConnection.accept`): the first of them the client offered
        // wins. None in common: no ALPN at all, and the client falls back to HTTP/1.1.
        SSL_CTX_set_alpn_select_cb(context, { ssl, out, outLength, input, inputLength, _ in
            guard let ssl, let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
            let preference = CTLS_SSL_get_app_data(ssl).map { Unmanaged<ALPNPreference>.fromOpaque($0).takeUnretainedValue() }
            let offered = UnsafeBufferPointer(start: input, count: Int(inputLength))
            guard let (start, length) = (preference ?? ALPNPreference.http11).choose(fromWire: offered) else {
                return SSL_TLSEXT_ERR_NOACK
            }
            out.pointee = input + start
            outLength.pointee = UInt8(length)
            return SSL_TLSEXT_ERR_OK
        }, nil)
        return result
    }

    /// The context for upstream connections: the system trust store plus `extraCAs`, peer
    /// verification unless `insecure`, ALPN `http/1.1` unless a connection offers its own list.
    public static func client(extraCAs: [Certificate], insecure: Bool, systemTrust: SystemTrust = .detect()) throws -> TLSContext {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TLSError(.failed, "SSL_CTX_new failed") }
        let result = TLSContext(pointer: context, verifiesPeer: !insecure, defersTrust: systemTrust == .openSSLDefaults)
        try configureCommon(context)
        try setTLS13Suites(context, clientOrder)
        // A hashed directory is only named here (a root is read when a chain needs it);
        // OpenSSL's defaults are read at the first connection (`loadDeferredTrust`).
        if case .hashedDirectory(let path) = systemTrust, SSL_CTX_load_verify_dir(context, path) != 1 {
            throw TLSError(.failed, "cannot load the system trust store")
        }
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

    /// Where upstream roots come from.
    public enum SystemTrust: Equatable, Sendable {
        /// A directory of certificates named by subject hash (`openssl rehash`): a root is read
        /// the first time a chain needs it. Debian's /etc/ssl/certs is one.
        case hashedDirectory(String)
        /// OpenSSL's defaults: `SSL_CERT_FILE`/`SSL_CERT_DIR`, else its default bundle file (all
        /// ~140 roots parsed at once: ~0.8 MiB of heap for the life of the proxy, ~70 ms) and
        /// directory; read at the first upstream connection, not when the context is made.
        case openSSLDefaults

        /// The hashed default directory when it has hash links and no `SSL_CERT_FILE` or
        /// `SSL_CERT_DIR` asks for something else; OpenSSL's defaults otherwise.
        public static func detect(environment: [String: String] = ProcessInfo.processInfo.environment,
                                  directory: String = String(cString: X509_get_default_cert_dir())) -> SystemTrust {
            guard environment["SSL_CERT_FILE"] == nil, environment["SSL_CERT_DIR"] == nil else { return .openSSLDefaults }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.contains(where: isHashLink) ? .hashedDirectory(directory) : .openSSLDefaults
        }

        /// `5ad8a5d6.0`: eight hex digits, a dot, a number.
        static func isHashLink(_ name: String) -> Bool {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit)
                && !parts[1].isEmpty && parts[1].allSatisfy(\.isNumber)
        }
    }

    /// TLS 1.3 suites, AES-128-GCM first as Chrome, Firefox, OkHttp and Go order them:
    /// OpenSSL's default puts AES-256-GCM first, which costs ~30 % more per byte (measured
    /// here: 3.06 vs 2.37 GB/s) for no security a debugging proxy needs. Every relayed byte is
    /// decrypted and encrypted once on each side, so this is most of a large download's crypto.
    static let clientOrder = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
    static let serverOrder = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"

    private static func setTLS13Suites(_ context: OpaquePointer, _ suites: String) throws {
        guard SSL_CTX_set_ciphersuites(context, suites) == 1 else {
            throw TLSError(.failed, "cannot set the TLS 1.3 cipher suites")
        }
    }

    private static func configureCommon(_ context: OpaquePointer) throws {
        guard CTLS_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw TLSError(.failed, "cannot set the minimum TLS version")
        }
        SSL_CTX_set_options(context, CTLS_SSL_OP_NO_COMPRESSION() | CTLS_SSL_OP_NO_RENEGOTIATION() | CTLS_SSL_OP_IGNORE_UNEXPECTED_EOF())
        // Not SSL_MODE_RELEASE_BUFFERS: it frees and reallocates OpenSSL's ~17 KiB record buffers
        // around every read and write of a busy connection. An idle one gives them back in
        // `TLSConnection.releaseBuffers` instead.
        _ = CTLS_SSL_CTX_set_mode(context, Int(SSL_MODE_AUTO_RETRY))
        if KeyLog.isEnabled { KeyLog.install(on: context) }
    }
}
