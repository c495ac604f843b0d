import CTLS
import Foundation

/// The outcome of verifying a served certificate chain against a set of trust anchors.
public enum ChainVerification: Sendable {
    /// The chain verified; `path` is the chain OpenSSL built, leaf first, ending at the anchor
    /// (which the server need not have sent). Served certificates off the path are not in it.
    case verified(path: [Certificate])
    /// The chain did not verify; `reason` is OpenSSL's `X509_verify_cert_error_string` and
    /// `code` the `X509_V_ERR_*` value. OpenSSL 3 words them in lower case ("hostname mismatch").
    case failed(reason: String, code: Int32)

    /// The verified path, or nil when verification failed.
    public var path: [Certificate]? {
        if case .verified(let path) = self { return path }
        return nil
    }

    /// True for `.verified`.
    public var isVerified: Bool { path != nil }
}

/// Verifies a server's certificate chain the way a TLS client does: path building to a trust
/// anchor, validity at a given time, purpose `sslserver`, and the host name.
///
/// Stands in for what SecTrust (TrustKit), Conscrypt's TrustManagerImpl (Android NSC) and the
/// JVM trust manager (OkHttp) compute before pins are consulted: the *evaluated* chain.
public struct ChainVerifier: Sendable {
    /// What to trust and when to check.
    public struct Configuration: Sendable {
        /// Certificates that terminate a path. Default: none.
        public var trustAnchors: [Certificate]
        /// Also trust OpenSSL's default CA paths (`X509_STORE_set_default_paths`). Default: false.
        public var useSystemTrustStore: Bool
        /// The time at which validity periods are checked; nil means now. Default: nil.
        public var verificationTime: Date?
        /// Accept an anchor that is not self-signed (an intermediate) as the end of the path.
        /// Default: true, because SecTrust anchors and Java `TrustAnchor`s both terminate a path
        /// wherever they sit; OpenSSL needs `X509_V_FLAG_PARTIAL_CHAIN` for that.
        public var acceptsIntermediateAnchors: Bool

        /// A configuration with every default stated above unless overridden.
        public init(
            trustAnchors: [Certificate] = [],
            useSystemTrustStore: Bool = false,
            verificationTime: Date? = nil,
            acceptsIntermediateAnchors: Bool = true
        ) {
            self.trustAnchors = trustAnchors
            self.useSystemTrustStore = useSystemTrustStore
            self.verificationTime = verificationTime
            self.acceptsIntermediateAnchors = acceptsIntermediateAnchors
        }
    }

    /// The configuration this verifier was built with.
    public let configuration: Configuration

    /// A verifier for `configuration`.
    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// A verifier trusting `trustAnchors`, optionally the system store, at `verificationTime`.
    public init(trustAnchors: [Certificate], useSystemTrustStore: Bool = false, verificationTime: Date? = nil) {
        self.init(Configuration(trustAnchors: trustAnchors, useSystemTrustStore: useSystemTrustStore,
                                verificationTime: verificationTime))
    }

    /// Verifies `chain` (leaf first, as a server sends it) for `host`.
    ///
    /// - Parameters:
    ///   - chain: the served certificates; the first is the leaf, the rest are untrusted helpers.
    ///   - host: the name the client connected to; an IP literal is checked against IP SANs.
    ///     nil skips the name check.
    /// - Returns: `.verified(path:)` with the built chain, or `.failed` with OpenSSL's reason.
    public func verify(chain: [Certificate], host: String?) -> ChainVerification {
        guard let leaf = chain.first else {
            return .failed(reason: "no certificate was presented", code: Int32(X509_V_ERR_UNSPECIFIED))
        }
        OpenSSLErrorQueue.clear()
        defer { OpenSSLErrorQueue.clear() }
        guard let store = X509_STORE_new() else { return Self.internalFailure("allocating an X509_STORE") }
        defer { X509_STORE_free(store) }
        for anchor in configuration.trustAnchors {
            // A duplicate anchor is not an error worth failing the verification for.
            _ = X509_STORE_add_cert(store, anchor.pointer)
        }
        if configuration.useSystemTrustStore { _ = X509_STORE_set_default_paths(store) }

        guard let context = X509_STORE_CTX_new() else { return Self.internalFailure("allocating an X509_STORE_CTX") }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = CTLS_sk_X509_new_null() else { return Self.internalFailure("allocating a stack") }
        // The stack borrows the certificates: free only the stack, not its elements.
        defer { CTLS_sk_X509_free(untrusted) }
        for certificate in chain.dropFirst() { _ = CTLS_sk_X509_push(untrusted, certificate.pointer) }

        guard X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
            return Self.internalFailure("initialising the verification context")
        }
        _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
        guard let parameters = X509_STORE_CTX_get0_param(context) else {
            return Self.internalFailure("reading the verification parameters")
        }
        if let time = configuration.verificationTime {
            X509_VERIFY_PARAM_set_time(parameters, time_t(time.timeIntervalSince1970.rounded(.down)))
        }
        if configuration.acceptsIntermediateAnchors {
            _ = X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        }
        if let host, !host.isEmpty {
            let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
            // set1_ip_asc accepts only IPv4/IPv6 literals; anything else is a DNS name.
            if X509_VERIFY_PARAM_set1_ip_asc(parameters, bare) != 1 {
                OpenSSLErrorQueue.clear()
                guard X509_VERIFY_PARAM_set1_host(parameters, bare, 0) == 1 else {
                    let code = Int32(X509_V_ERR_HOSTNAME_MISMATCH)
                    return .failed(reason: String(cString: X509_verify_cert_error_string(Int(code))), code: code)
                }
            }
        }

        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "unknown error"
            return .failed(reason: reason, code: code)
        }
        guard let built = X509_STORE_CTX_get1_chain(context) else {
            return Self.internalFailure("reading the verified chain")
        }
        defer { CTLS_sk_X509_pop_free(built) }
        var path: [Certificate] = []
        for index in 0..<CTLS_sk_X509_num(built) {
            guard let certificate = CTLS_sk_X509_value(built, index) else { continue }
            path.append(Certificate(copying: certificate))
        }
        return .verified(path: path)
    }

    /// A failure that is ours or OpenSSL's, not the chain's.
    private static func internalFailure(_ context: String) -> ChainVerification {
        let details = OpenSSLErrorQueue.drain().joined(separator: "; ")
        return .failed(reason: context + (details.isEmpty ? "" : ": " + details), code: Int32(X509_V_ERR_UNSPECIFIED))
    }
}
