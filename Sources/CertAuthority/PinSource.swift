import CTLS
import Foundation

/// Something with a public key to pin: a certificate, a public key, a private key or a CSR.
/// A key or CSR usually stands for the *next* key, whose pin is the backup pin.
public struct PinSource: Sendable {
    public enum Kind: String, Sendable { case certificate, publicKey = "public_key", privateKey = "private_key", csr }

    public let kind: Kind
    public let subject: String?
    public let issuer: String?
    public let notAfter: Date?
    public let keyDescription: String
    public let spkiDER: [UInt8]
    /// The certificate, when `kind` is `.certificate`.
    public let certificate: Certificate?

    /// `sha256/<base64>` of the SPKI.
    public var pin: String { SPKIPin.sha256(of: spkiDER) }

    /// Everything pinnable in a PEM or DER file, in order.
    ///
    /// - Throws: `.corruptCertificate` when nothing in the file has a public key.
    public static func all(in bytes: [UInt8]) throws -> [PinSource] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("-----BEGIN") else {
            guard let source = fromDER(bytes) else {
                throw CAError(.corruptCertificate, "not a PEM or DER certificate, public key, private key or CSR")
            }
            return [source]
        }
        var result: [PinSource] = []
        for block in PEMBlock.all(in: text) {
            guard let der = block.der else {
                throw CAError(.corruptCertificate, "the PEM block \(block.label) is damaged (not base64; truncated file?)")
            }
            switch block.label {
            case "CERTIFICATE", "TRUSTED CERTIFICATE":
                result.append(PinSource(certificate: try Certificate(der: der)))
            case "PUBLIC KEY", "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST", "RSA PUBLIC KEY":
                guard let source = fromDER(der) else { throw CAError(.corruptCertificate, "the \(block.label) is corrupt") }
                result.append(source)
            case let label where label.hasSuffix("PRIVATE KEY"):
                let key = try PrivateKey(pem: Array(block.text.utf8), passphrase: nil)
                result.append(PinSource(kind: .privateKey, subject: nil, issuer: nil, notAfter: nil,
                                        keyDescription: key.algorithmDescription, spkiDER: try key.publicKeyDER, certificate: nil))
            default:
                continue
            }
        }
        guard !result.isEmpty else { throw CAError(.corruptCertificate, "no certificate, key or CSR in the PEM data") }
        return result
    }

    public init(certificate: Certificate) {
        self.init(kind: .certificate, subject: certificate.subject, issuer: certificate.issuer, notAfter: certificate.notAfter,
                  keyDescription: certificate.keyDescription, spkiDER: certificate.spkiDER, certificate: certificate)
    }

    init(kind: Kind, subject: String?, issuer: String?, notAfter: Date?, keyDescription: String, spkiDER: [UInt8], certificate: Certificate?) {
        self.kind = kind
        self.subject = subject
        self.issuer = issuer
        self.notAfter = notAfter
        self.keyDescription = keyDescription
        self.spkiDER = spkiDER
        self.certificate = certificate
    }

    /// Tries each DER type in turn: certificate, SubjectPublicKeyInfo, CSR, private key.
    private static func fromDER(_ der: [UInt8]) -> PinSource? {
        if let certificate = try? Certificate(der: der) { return PinSource(certificate: certificate) }
        defer { ERR_clear_error() }
        return der.withUnsafeBufferPointer { buffer -> PinSource? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            if let key = d2i_PUBKEY(nil, &cursor, buffer.count) {
                defer { EVP_PKEY_free(key) }
                return PinSource(kind: .publicKey, subject: nil, issuer: nil, notAfter: nil,
                                 keyDescription: KeyDescription.describe(key), spkiDER: der, certificate: nil)
            }
            cursor = buffer.baseAddress
            if let request = d2i_X509_REQ(nil, &cursor, buffer.count) {
                defer { X509_REQ_free(request) }
                guard let key = X509_REQ_get0_pubkey(request) else { return nil }
                return source(kind: .csr, key: key, subject: Certificate.oneLine(X509_REQ_get_subject_name(request)))
            }
            cursor = buffer.baseAddress
            if let key = d2i_AutoPrivateKey(nil, &cursor, buffer.count) {
                defer { EVP_PKEY_free(key) }
                return source(kind: .privateKey, key: key, subject: nil)
            }
            // PKCS#1 `RSA PUBLIC KEY` (what `openssl rsa -RSAPublicKey_out` and older toolkits
            // write): its SubjectPublicKeyInfo is what a pin hashes. It was refused.
            cursor = buffer.baseAddress
            if let key = d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, buffer.count) {
                defer { EVP_PKEY_free(key) }
                return source(kind: .publicKey, key: key, subject: nil)
            }
            return nil
        }
    }

    private static func source(kind: Kind, key: OpaquePointer, subject: String?) -> PinSource? {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_PUBKEY(key, &out)
        guard length > 0, let out else { return nil }
        defer { CTLS_OPENSSL_free(out) }
        return PinSource(kind: kind, subject: subject, issuer: nil, notAfter: nil, keyDescription: KeyDescription.describe(key),
                         spkiDER: Array(UnsafeBufferPointer(start: out, count: Int(length))), certificate: nil)
    }
}
