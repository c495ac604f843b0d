import CTLS
import Foundation

/// A CA that mints leaves: an engineer's intermediate (or the team root) with its key and the
/// chain to send after the leaf.
///
/// Built once, then shared read-only between connection threads.
public final class Signer: Sendable {
    public let certificate: Certificate
    let key: PrivateKey
    /// Certificates to send after the leaf, excluding the root (the client's trust anchor):
    /// `[intermediate]` for an intermediate, `[]` when the root signs; during a root rotation's
    /// transition window the cross-certificate follows (the new root signed by the old one), so
    /// clients that trust only the old root still build a path.
    public let chain: [Certificate]
    /// The root this signer chains to, when known.
    public let root: Certificate?
    /// Permitted DNS subtrees from the certificate's nameConstraints; empty means unconstrained.
    public let permittedDNS: [String]

    /// - Parameter crossCertificates: sent after the signing certificate (a rotation's
    ///   cross-certificate); default none.
    /// - Throws: `.keyMismatch` when `key` is not the certificate's key, `.invalidInput` when the
    ///   certificate is not a CA.
    public init(certificate: Certificate, key: PrivateKey, root: Certificate?,
                crossCertificates: [Certificate] = []) throws {
        guard certificate.matches(key) else {
            throw CAError(.keyMismatch, "the private key does not belong to the certificate \(certificate.subject)")
        }
        guard certificate.isCA else {
            throw CAError(.invalidInput, "\(certificate.subject) is not a CA certificate and cannot sign leaves")
        }
        self.certificate = certificate
        self.key = key
        self.root = root
        self.chain = (certificate.isSelfSigned ? [] : [certificate]) + crossCertificates
        self.permittedDNS = certificate.permittedDNSSubtrees
    }

    /// Loads an intermediate bundle: the PEM file `ca issue` writes (key, intermediate, root; after
    /// `ca rotate`, key, intermediate, cross-certificate, root).
    public convenience init(bundle: [UInt8], passphrase: String? = nil) throws {
        let key = try PrivateKey(pem: bundle, passphrase: passphrase)
        let certificates = try Certificate.all(from: bundle)
        guard let signing = certificates.first(where: { $0.matches(key) }) else {
            throw CAError(.keyMismatch, "the bundle's key does not match any certificate in it")
        }
        let root = certificates.first { $0.isSelfSigned && $0 != signing }
        let cross = certificates.filter { $0 != signing && !$0.isSelfSigned && $0.isCA }
        try self.init(certificate: signing, key: key, root: root ?? (signing.isSelfSigned ? signing : nil),
                      crossCertificates: cross)
    }

    /// Whether the certificate may sign at `date`.
    ///
    /// - Throws: `.signerExpired` or `.signerNotYetValid` with what to do.
    public func checkValidity(at date: Date = Date()) throws {
        let what = certificate.isSelfSigned ? "the root" : "the intermediate"
        if date > certificate.notAfter {
            // The root is what `ca issue` needs: "get a new one with `ca issue`" sent a lead round
            // in a circle.
            let remedy = certificate.isSelfSigned
                ? "this CA cannot sign any more; a new root takes `devproxy ca init --next` and `devproxy ca rotate`, or a new --ca-dir"
                : "get a new one with `devproxy ca issue --email \(certificate.email ?? "EMAIL")`"
            throw CAError(.signerExpired, "\(what) \(certificate.serialHex) expired on \(ISO8601.string(certificate.notAfter)); \(remedy)")
        }
        if date < certificate.notBefore {
            throw CAError(.signerNotYetValid, "\(what) \(certificate.serialHex) is not valid before \(ISO8601.string(certificate.notBefore))")
        }
    }

    /// Whether a leaf for `name` would satisfy the nameConstraints (RFC 5280 §4.2.1.10: a DNS
    /// name matches a subtree when it equals it or ends with "." + it). An intermediate with DNS
    /// subtrees signs no IP address: `ca issue --permit-dns` excludes them all, and under one made
    /// before it did, clients disagreed (OpenSSL refused such a leaf by its CN, NSS took it).
    public func permits(_ name: LeafName) -> Bool {
        guard !permittedDNS.isEmpty else { return true }
        guard case .dns(let host) = name else { return false }
        let bare = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
        return permittedDNS.contains { subtree in
            let domain = subtree.lowercased()
            if domain.hasPrefix(".") { return bare.hasSuffix(domain) }
            return bare == domain || bare.hasSuffix("." + domain)
        }
    }
}
