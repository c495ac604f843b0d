import CertAuthority
import CTLS

/// What happened with client authentication on one upstream handshake: whether the origin sent
/// a CertificateRequest, the CA names it listed, and the identity DevProxy presented.
///
/// OpenSSL calls `install`'s callback on the connection's thread, during `SSL_connect`, only when
/// the origin asks for a certificate (TLS 1.2 CertificateRequest, TLS 1.3 CertificateRequest in
/// the handshake); the connection reads the outcome afterwards.
final class ClientCertificateRequest {
    private let host: String
    private let rules: [ClientCertificateRule]
    /// True once the origin asked for a certificate.
    private(set) var requested = false
    /// The identity presented, nil when none was (none configured for the host).
    private(set) var presented: ClientIdentity?
    /// The acceptable CA names the origin sent, in OpenSSL's one-line form.
    private(set) var acceptableCAs: [String] = []

    init(host: String, rules: [ClientCertificateRule]) {
        self.host = host
        self.rules = rules
    }

    /// Sets the certificate callback on `ssl`; the caller keeps `self` alive as long as `ssl`.
    func install(on ssl: OpaquePointer) {
        SSL_set_cert_cb(ssl, { ssl, argument in
            guard let ssl, let argument else { return 1 }
            let request = Unmanaged<ClientCertificateRequest>.fromOpaque(argument).takeUnretainedValue()
            return request.choose(ssl) ? 1 : 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Records the request and installs the chosen identity; false (the handshake fails) only
    /// when OpenSSL refuses an identity that loaded fine at start-up.
    private func choose(_ ssl: OpaquePointer) -> Bool {
        requested = true
        var names: [[UInt8]] = []
        if let list = SSL_get0_peer_CA_list(ssl) {
            for index in 0..<CTLS_sk_X509_NAME_num(list) {
                guard let name = CTLS_sk_X509_NAME_value(list, index) else { continue }
                names.append(ClientIdentity.nameDER(name))
                acceptableCAs.append(Certificate.oneLine(name))
            }
        }
        // No identity: returning 1 with no certificate makes OpenSSL send an empty Certificate
        // message (RFC 8446 §4.4.2.4, RFC 5246 §7.4.6); the origin then decides.
        guard let identity = rules.identity(for: host, caNames: names) else { return true }
        guard let stack = CTLS_sk_X509_new_null() else { return false }
        defer { CTLS_sk_X509_free(stack) }
        for member in identity.chain {
            // The stack borrows: SSL_use_cert_and_key takes its own references.
            member.withX509 { _ = CTLS_sk_X509_push(stack, $0) }
        }
        let installed = identity.certificate.withX509 { x509 in
            identity.key.withEVPPKey { key in SSL_use_cert_and_key(ssl, x509, key, stack, 1) }
        }
        guard installed == 1 else { return false }
        presented = identity
        return true
    }

    /// Requested, and nothing was presented.
    var missing: Bool { requested && presented == nil }
}
