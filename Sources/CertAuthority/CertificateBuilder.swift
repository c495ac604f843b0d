import CTLS
import Foundation

/// Assembles and signs one X.509 v3 certificate.
///
/// Profiles (`CertificateProfile`) describe what goes in; this type only knows how to put it
/// there with OpenSSL. Extensions are added in the order given.
struct CertificateBuilder {
    /// One subject attribute, e.g. `("CN", "DevProxy Root")`.
    typealias NameEntry = (field: String, value: String)

    /// One extension in OpenSSL's configuration syntax, e.g. `(NID_basic_constraints, "critical,CA:TRUE")`.
    typealias Extension = (nid: Int32, value: String)

    var subject: [NameEntry]
    var serial: [UInt8] = Self.randomSerial()
    var notBefore: Date
    var notAfter: Date
    var extensions: [Extension]

    /// Signs a certificate for `publicKey` with `issuerKey`.
    ///
    /// - Parameters:
    ///   - publicKey: the key the certificate certifies.
    ///   - issuer: the issuing certificate, or nil for a self-signed one.
    ///   - issuerKey: the issuer's private key (the subject's own key when self-signed).
    func sign(publicKey: PrivateKey, issuer: Certificate?, issuerKey: PrivateKey) throws -> Certificate {
        OpenSSLErrorQueue.clear()
        guard let x509 = X509_new() else { throw CAError.openSSL("allocating a certificate") }
        let certificate = Certificate(takingOwnership: x509)
        guard X509_set_version(x509, 2) == 1 else { throw CAError.openSSL("setting the certificate version") }
        try setSerial(x509)
        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.timeIntervalSince1970)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.timeIntervalSince1970)) != nil else {
            throw CAError.openSSL("setting the validity period")
        }
        // Entries go straight into the certificate's own name: X509_set_subject_name would
        // copy a separately built one, a tenth of a leaf's cost.
        let name = X509_get_subject_name(x509)
        try Self.addEntries(subject, to: name)
        guard X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.pointer) } ?? name) == 1,
              X509_set_pubkey(x509, publicKey.pointer) == 1 else {
            throw CAError.openSSL("setting names and public key")
        }
        var context = X509V3_CTX()
        CTLS_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer?.pointer ?? x509, x509, nil, nil, 0)
        for ext in extensions {
            guard let made = X509V3_EXT_conf_nid(nil, &context, ext.nid, ext.value) else {
                throw CAError.openSSL("building extension \(String(cString: OBJ_nid2sn(ext.nid))) = \(ext.value)")
            }
            defer { X509_EXTENSION_free(made) }
            guard X509_add_ext(x509, made, -1) == 1 else { throw CAError.openSSL("adding an extension") }
        }
        guard X509_sign(x509, issuerKey.pointer, issuerKey.signingDigest) > 0 else {
            throw CAError.openSSL("signing the certificate")
        }
        return certificate
    }

    /// 16 random bytes with the top bit clear: a positive INTEGER of at least 64 bits of
    /// entropy (CA/Browser Forum BR §7.1 asks for 64), never zero.
    static func randomSerial() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        while bytes.allSatisfy({ $0 == 0 }) || bytes[0] & 0x7f == 0 {
            _ = RAND_bytes(&bytes, Int32(bytes.count))
            bytes[0] &= 0x7f
        }
        return bytes
    }

    private func setSerial(_ x509: OpaquePointer) throws {
        guard let bn = BN_bin2bn(serial, Int32(serial.count), nil) else { throw CAError.openSSL("making the serial") }
        defer { BN_free(bn) }
        guard BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509)) != nil else {
            throw CAError.openSSL("setting the serial")
        }
    }

    static func addEntries(_ entries: [NameEntry], to name: OpaquePointer?) throws {
        for entry in entries {
            guard X509_NAME_add_entry_by_txt(name, entry.field, MBSTRING_UTF8, entry.value, -1, -1, 0) == 1 else {
                throw CAError.openSSL("adding \(entry.field) to the subject", code: .invalidInput)
            }
        }
    }
}
