import CTLS
import Foundation

/// An X.509 certificate (X509), owned exclusively by this object and freed with it.
///
/// Immutable once built, so it is shared freely between threads.
public final class Certificate: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of an X509; the caller must not free it.
    init(takingOwnership pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Shares a certificate owned elsewhere (for example a peer's chain): takes a reference
    /// of its own, so the caller keeps and frees its pointer as before.
    public init(copying pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Lends the X509 to OpenSSL calls in other modules; the pointer must not escape `body`
    /// (OpenSSL calls that keep it, such as SSL_use_certificate, take their own reference).
    public func withX509<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R {
        try body(pointer)
    }

    /// Parses one DER certificate.
    public convenience init(der: [UInt8]) throws {
        OpenSSLErrorQueue.clear()
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw CAError.openSSL("the certificate is not valid DER", code: .corruptCertificate) }
        self.init(takingOwnership: parsed)
    }

    /// Parses every certificate in `bytes`, which may be PEM (one or many) or a single DER.
    ///
    /// - Throws: `.corruptCertificate` when nothing parses or a PEM block is damaged.
    public static func all(from bytes: [UInt8]) throws -> [Certificate] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("-----BEGIN") else { return [try Certificate(der: bytes)] }
        var result: [Certificate] = []
        for block in PEMBlock.all(in: text) where block.label == "CERTIFICATE" || block.label == "TRUSTED CERTIFICATE" {
            guard let der = block.der else {
                throw CAError(.corruptCertificate, "a PEM certificate block is not valid base64 (truncated file?)")
            }
            result.append(try Certificate(der: der))
        }
        guard !result.isEmpty else { throw CAError(.corruptCertificate, "no certificate found in the PEM data") }
        return result
    }

    /// The DER encoding.
    public var der: [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509(pointer, &out)
        guard length > 0, let out else { return [] }
        defer { CTLS_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// The PEM encoding, one `CERTIFICATE` block ending in a newline.
    public var pem: String { PEMBlock(label: "CERTIFICATE", der: der).text }

    /// The subject in OpenSSL's one-line RFC 2253-like form (`CN = …, O = …`).
    public var subject: String { Self.oneLine(X509_get_subject_name(pointer)) }

    /// The issuer in the same form as `subject`.
    public var issuer: String { Self.oneLine(X509_get_issuer_name(pointer)) }

    /// The subject's common name, if any.
    public var commonName: String? { Self.entry(X509_get_subject_name(pointer), nid: NID_commonName) }

    /// The subject's emailAddress attribute, if any.
    public var subjectEmail: String? { Self.entry(X509_get_subject_name(pointer), nid: NID_pkcs9_emailAddress) }

    /// The serial number as lower-case hex without leading zeros.
    public var serialHex: String {
        guard let bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(pointer), nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { CTLS_OPENSSL_free(hex) }
        return String(cString: hex).lowercased()
    }

    public var notBefore: Date { Self.date(X509_get0_notBefore(pointer)) }
    public var notAfter: Date { Self.date(X509_get0_notAfter(pointer)) }

    /// DER SubjectPublicKeyInfo as the certificate holds it: the bytes a pin hashes.
    ///
    /// Written from the certificate's own `X509_PUBKEY` (the algorithm and key bit string as
    /// decoded) rather than from the key object with `i2d_PUBKEY`, which goes through OpenSSL
    /// 3.0's encoder lookup: ~0.7M instructions a call, once per upstream connection's chain.
    public var spkiDER: [UInt8] {
        guard let key = X509_get_X509_PUBKEY(pointer) else { return [] }
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_X509_PUBKEY(key, &out)
        guard length > 0, let out else { return [] }
        defer { CTLS_OPENSSL_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// `sha256/<base64>` of the SPKI.
    public var pin: String { SPKIPin.sha256(of: spkiDER) }

    /// SHA-256 of the DER certificate, as colon-separated upper-case hex.
    public var sha256Fingerprint: String { Digest.sha256(der).colonHex }

    /// Key algorithm and size (`EC P-256`, `RSA 2048`).
    public var keyDescription: String {
        guard let key = X509_get0_pubkey(pointer) else { return "unknown key" }
        return KeyDescription.describe(key)
    }

    /// True when basicConstraints says CA:TRUE.
    public var isCA: Bool { X509_check_ca(pointer) != 0 }

    /// True when subject and issuer match and the certificate verifies with its own key.
    public var isSelfSigned: Bool { X509_check_issued(pointer, pointer) == X509_V_OK }

    /// Subject key identifier bytes, if present.
    public var subjectKeyIdentifier: [UInt8]? {
        guard let ski = X509_get0_subject_key_id(pointer) else { return nil }
        return Self.bytes(of: ski)
    }

    /// Authority key identifier (keyIdentifier field) bytes, if present.
    public var authorityKeyIdentifier: [UInt8]? {
        guard let aki = X509_get0_authority_key_id(pointer) else { return nil }
        return Self.bytes(of: aki)
    }

    /// True when `issuer`'s key verifies this certificate's signature and the names chain.
    public func isIssued(by issuer: Certificate) -> Bool {
        guard X509_check_issued(issuer.pointer, pointer) == X509_V_OK,
              let key = X509_get0_pubkey(issuer.pointer) else { return false }
        let ok = X509_verify(pointer, key) == 1
        ERR_clear_error()
        return ok
    }

    /// True when `key` is the private half of this certificate's public key.
    public func matches(_ key: PrivateKey) -> Bool {
        let ok = X509_check_private_key(pointer, key.pointer) == 1
        ERR_clear_error()
        return ok
    }

    /// A name in OpenSSL's one-line form with UTF-8 kept as is.
    public static func oneLine(_ name: OpaquePointer?) -> String {
        guard let name, let bio = try? MemoryBIO() else { return "" }
        X509_NAME_print_ex(bio.pointer, name, 0, CTLS_XN_FLAG_ONELINE() & ~UInt(ASN1_STRFLGS_ESC_MSB))
        return bio.string
    }

    private static func entry(_ name: OpaquePointer?, nid: Int32) -> String? {
        guard let name else { return nil }
        let index = X509_NAME_get_index_by_NID(name, nid, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
              let data = X509_NAME_ENTRY_get_data(entry) else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else { return nil }
        defer { CTLS_OPENSSL_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }

    static func bytes(of string: UnsafePointer<ASN1_OCTET_STRING>) -> [UInt8] {
        let length = Int(ASN1_STRING_length(string))
        guard length > 0, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        guard let time else { return .distantPast }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return .distantPast }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}

extension Certificate: Equatable {
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        X509_cmp(lhs.pointer, rhs.pointer) == 0
    }
}
