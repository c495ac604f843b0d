import CTLS
import Foundation

/// A client certificate with its private key and chain, presented to origins that ask for one
/// (`devproxy run --client-cert`): what an app's `MutualTLSClient` imports from a PKCS#12 file.
public final class ClientIdentity: Sendable {
    public let certificate: Certificate
    /// The certificates sent after the leaf (intermediates), issuer order; never the leaf.
    public let chain: [Certificate]
    public let key: PrivateKey
    /// The file it came from, for messages and the flow log.
    public let path: String
    /// DER names of the issuers and subjects along the chain: an origin's list of acceptable CA
    /// names selects this identity when one of these is on it.
    private let caNames: Set<[UInt8]>

    public init(certificate: Certificate, chain: [Certificate], key: PrivateKey, path: String) {
        self.certificate = certificate
        self.chain = chain
        self.key = key
        self.path = path
        var names: Set<[UInt8]> = []
        for member in [certificate] + chain {
            member.withX509 { x509 in
                names.insert(Self.der(of: X509_get_issuer_name(x509)))
                if member !== certificate { names.insert(Self.der(of: X509_get_subject_name(x509))) }
            }
        }
        caNames = names
    }

    /// Whether `name` (DER of an X.509 Name an origin listed as an acceptable CA) issued this
    /// certificate or one of its chain, or is one of its chain.
    public func isIssued(byNameDER name: [UInt8]) -> Bool { caNames.contains(name) }

    /// Reads a PEM file (certificate, chain and private key, in any order) or a PKCS#12 file.
    ///
    /// - Parameter passphrase: for an encrypted PEM key or the PKCS#12 file; nil tries none
    ///   (PKCS#12 files made with `-passout pass:` have an empty one).
    /// - Throws: `CAError`: `.wrongPassphrase`, `.passphraseRequired`, `.keyMismatch` (the key
    ///   is not the certificate's), `.corruptCertificate`/`.corruptKey` (unreadable), `.notFound`.
    public static func load(path: String, passphrase: String?) throws -> ClientIdentity {
        let bytes = try SecureFile.read(path, what: "the client certificate")
        let text = String(decoding: bytes.prefix(64 * 1024), as: UTF8.self)
        let identity = text.contains("-----BEGIN")
            ? try pem(bytes, path: path, passphrase: passphrase)
            : try pkcs12(bytes, path: path, passphrase: passphrase)
        guard identity.certificate.matches(identity.key) else {
            throw CAError(.keyMismatch, "\(path): the private key does not match the certificate "
                          + "\(identity.certificate.subject)")
        }
        return identity
    }

    private static func pem(_ bytes: [UInt8], path: String, passphrase: String?) throws -> ClientIdentity {
        let certificates: [Certificate]
        let key: PrivateKey
        do {
            certificates = try Certificate.all(from: bytes)
            key = try PrivateKey(pem: bytes, passphrase: passphrase)
        } catch let error as CAError {
            let reason = error.code == .passphraseRequired
                ? "the key is encrypted; give its passphrase with --client-cert-passphrase-file FILE or "
                    + passphraseVariable
                : error.reason
            throw CAError(error.code, "\(path): \(reason)")
        }
        // The certificate is the one the key belongs to; the rest is its chain.
        let leaf = certificates.first { $0.matches(key) } ?? certificates[0]
        return ClientIdentity(certificate: leaf, chain: certificates.filter { $0 !== leaf }, key: key, path: path)
    }

    private static func pkcs12(_ bytes: [UInt8], path: String, passphrase: String?) throws -> ClientIdentity {
        let bio = try MemoryBIO(bytes: bytes)
        OpenSSLErrorQueue.clear()
        guard let p12 = d2i_PKCS12_bio(bio.pointer, nil) else {
            OpenSSLErrorQueue.clear()
            throw CAError(.corruptCertificate, "\(path) is neither PEM nor a readable PKCS#12 (.p12) file")
        }
        defer { PKCS12_free(p12) }
        let pass = passphrase ?? ""
        // `-passout pass:` writes a MAC over the empty password, which OpenSSL checks as "" or NULL.
        guard PKCS12_verify_mac(p12, pass, Int32(pass.utf8.count)) == 1
                || (passphrase == nil && PKCS12_verify_mac(p12, nil, 0) == 1) else {
            OpenSSLErrorQueue.clear()
            throw CAError(passphrase == nil ? .passphraseRequired : .wrongPassphrase,
                          passphrase == nil
                            ? "\(path) is protected by a passphrase; give it with --client-cert-passphrase-file FILE "
                                + "or \(passphraseVariable)"
                            : "wrong passphrase for \(path)")
        }
        var keyPointer: OpaquePointer?
        var certificatePointer: OpaquePointer?
        var caStack: OpaquePointer?
        guard PKCS12_parse(p12, pass, &keyPointer, &certificatePointer, &caStack) == 1 else {
            let details = OpenSSLErrorQueue.drain()
            // OpenSSL 3 reads RC2/3DES bags (`openssl pkcs12 -legacy`, old exports) only with its
            // legacy provider loaded.
            let hint = details.contains { $0.contains("unsupported") }
                ? "; it uses a legacy cipher: re-export it with `openssl pkcs12 -export` (OpenSSL 3 defaults)" : ""
            throw CAError(.corruptCertificate, "\(path): cannot read the PKCS#12 contents"
                          + (details.isEmpty ? "" : " (" + details.joined(separator: "; ") + ")") + hint)
        }
        var chain: [Certificate] = []
        if let caStack {
            for index in 0..<CTLS_sk_X509_num(caStack) {
                if let x509 = CTLS_sk_X509_value(caStack, index) { chain.append(Certificate(copying: x509)) }
            }
            CTLS_sk_X509_pop_free(caStack)
        }
        guard let keyPointer, let certificatePointer else {
            if let keyPointer { EVP_PKEY_free(keyPointer) }
            if let certificatePointer { X509_free(certificatePointer) }
            throw CAError(.corruptCertificate, "\(path) holds no certificate with its private key")
        }
        return ClientIdentity(certificate: Certificate(takingOwnership: certificatePointer), chain: chain,
                              key: PrivateKey(takingOwnership: keyPointer), path: path)
    }

    /// The environment variable that holds the client certificate's passphrase when no
    /// `--client-cert-passphrase-file` is given.
    public static let passphraseVariable = "DEVPROXY_CLIENT_CERT_PASSPHRASE"

    private static func der(of name: OpaquePointer?) -> [UInt8] {
        guard let name else { return [] }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_NAME(name, &out)
        guard length > 0, let out else { return [] }
        defer { CTLS_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// DER of an X.509 Name, for comparing with `isIssued(byNameDER:)`.
    public static func nameDER(_ name: OpaquePointer?) -> [UInt8] { der(of: name) }
}

/// `--client-cert [HOST_GLOB=]FILE`: which identity goes to which origins. A rule without a
/// glob serves every host.
public struct ClientCertificateRule: Sendable {
    public let pattern: GlobPattern?
    public let identity: ClientIdentity

    public init(pattern: GlobPattern?, identity: ClientIdentity) {
        self.pattern = pattern
        self.identity = identity
    }

    /// Parses `[HOST_GLOB=]FILE` and loads the file.
    ///
    /// - Throws: `CAError` as `ClientIdentity.load` does, `.invalidInput` for an empty part.
    public static func parse(_ argument: String, passphrase: String?) throws -> ClientCertificateRule {
        var pattern: GlobPattern?
        var path = argument
        if let equals = argument.firstIndex(of: "=") {
            let glob = String(argument[..<equals])
            path = String(argument[argument.index(after: equals)...])
            guard !glob.isEmpty else {
                throw CAError(.invalidInput, "--client-cert \(argument) is not [HOST_GLOB=]FILE")
            }
            pattern = GlobPattern(glob)
        }
        guard !path.isEmpty else { throw CAError(.invalidInput, "--client-cert \(argument) names no file") }
        let identity = try ClientIdentity.load(path: path, passphrase: passphrase)
        return ClientCertificateRule(pattern: pattern, identity: identity)
    }

    /// Whether the rule serves `host`.
    public func serves(_ host: String) -> Bool { pattern?.matches(host) ?? true }
}

extension Array where Element == ClientCertificateRule {
    /// The identity to present to `host`: among the rules that serve the host, in order, the
    /// first whose chain one of `caNames` (DER names the origin accepts) issued; when the origin
    /// names no CA, or none of them, the first rule that serves the host.
    public func identity(for host: String, caNames: [[UInt8]]) -> ClientIdentity? {
        let candidates = filter { $0.serves(host) }.map(\.identity)
        if let named = candidates.first(where: { identity in caNames.contains { identity.isIssued(byNameDER: $0) } }) {
            return named
        }
        return candidates.first
    }
}
