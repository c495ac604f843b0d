import CTLS
import Foundation

/// What DevProxy puts in each kind of certificate, read as data: one function per role,
/// extensions in a fixed order with criticality visible.
enum CertificateProfile {
    /// How far every certificate's not-before is set back for devices whose clocks run slow (a
    /// phone that was off, a VM restored from a snapshot). One figure for the whole chain: a
    /// verifier takes a chain only as early as its latest not-before.
    static let backdate: TimeInterval = 3600

    /// The team root: self-signed, `CA:TRUE` without a path length (it signs intermediates,
    /// and small teams may let it sign leaves directly).
    static func root(name: String, unit: String?, notBefore: Date, notAfter: Date) -> CertificateBuilder {
        CertificateBuilder(
            subject: [("O", "DevProxy")] + (unit.map { [("OU", String($0.prefix(64)))] } ?? []) + [("CN", name)],
            notBefore: notBefore, notAfter: notAfter,
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ])
    }

    /// An engineer's intermediate: `CA:TRUE, pathlen:0` so it signs leaves only, the email in
    /// the subject and as SAN rfc822Name (RFC 5280 §4.1.2.6 prefers the SAN; viewers show the
    /// subject), and optional permitted DNS subtrees so a leaked intermediate cannot
    /// impersonate hosts outside the team's domains. EKU serverAuth, as the CA/Browser Forum asks
    /// of a TLS subordinate CA (BR 7.1.2.2.g): verifiers that chain EKUs (OpenSSL's `-purpose`,
    /// Windows, macOS) then refuse what a leaked key signs for any other use, a client
    /// certificate, S/MIME for any address or code signing, where without it they took them.
    static func intermediate(email: String, permittedDNS: [String], notBefore: Date, notAfter: Date) -> CertificateBuilder {
        var extensions: [CertificateBuilder.Extension] = [
            (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"),
            (NID_key_usage, "critical,keyCertSign,cRLSign"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_key_identifier, "hash"),
            (NID_authority_key_identifier, "keyid:always"),
            (NID_subject_alt_name, "email:" + email),
        ]
        if !permittedDNS.isEmpty {
            // DNS subtrees say nothing of IP addresses (RFC 5280 §4.2.1.10): NSS accepted a leaf for
            // any IP literal under an intermediate "for acme.dev". Every address is excluded, as the
            // CA/Browser Forum asks of a technically constrained subordinate CA (BR 7.1.2.5.2).
            let subtrees = (permittedDNS.map { "permitted;DNS:" + $0 }
                            + ["excluded;IP:0.0.0.0/0.0.0.0", "excluded;IP:::/::"]).joined(separator: ",")
            extensions.append((NID_name_constraints, "critical," + subtrees))
        }
        return CertificateBuilder(
            // RFC 5280's upper bound for CN is 64 characters; the full email is in emailAddress and the SAN.
            subject: [("O", "DevProxy"), ("CN", String(("DevProxy Intermediate " + email).prefix(64))), ("emailAddress", email)],
            notBefore: notBefore, notAfter: notAfter,
            extensions: extensions)
    }

    /// A per-host leaf: SAN always present, CN = the first name, serverAuth only. An RSA key's
    /// leaf may also encipher (`keyEncipherment`, as mkcert and public CAs issue them): TLS 1.2's
    /// RSA key exchange, which the `no-forward-secrecy` persona offers, needs it, and Java and NSS
    /// refused the leaf without it ("KeyUsage does not allow key encipherment").
    static func leaf(names: [LeafName], notBefore: Date, notAfter: Date, rsa: Bool = false) -> CertificateBuilder {
        let san = names.map(\.subjectAltName).joined(separator: ",")
        // RFC 5280 caps a CN at 64 characters, and CA/B BR §7.1.4.3 wants it to be one of the SAN
        // values: a longer name has no CN (as mitmproxy does), where it had the name cut at 64,
        // which matched nothing. The SAN carries every name.
        let first = names.first?.text ?? "devproxy"
        return CertificateBuilder(
            subject: first.utf8.count <= 64 ? [("O", "DevProxy"), ("CN", first)] : [("O", "DevProxy")],
            notBefore: notBefore, notAfter: notAfter,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
                (NID_subject_alt_name, san),
            ])
    }
}
