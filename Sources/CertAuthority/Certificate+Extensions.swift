import CTLS

extension Certificate {
    /// The permitted DNS subtrees of a nameConstraints extension, if any.
    public var permittedDNSSubtrees: [String] {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(pointer, NID_name_constraints, &critical, nil) else { return [] }
        let constraints = raw.assumingMemoryBound(to: NAME_CONSTRAINTS.self)
        defer { NAME_CONSTRAINTS_free(constraints) }
        guard let permitted = constraints.pointee.permittedSubtrees else { return [] }
        var result: [String] = []
        for index in 0..<OPENSSL_sk_num(permitted) {
            guard let subtree = OPENSSL_sk_value(permitted, index)?
                .assumingMemoryBound(to: GENERAL_SUBTREE.self),
                  let base = subtree.pointee.base, base.pointee.type == GEN_DNS,
                  let ia5 = base.pointee.d.dNSName else { continue }
            result.append(String(decoding: Certificate.bytes(of: ia5), as: UTF8.self))
        }
        return result
    }

    /// The rfc822Name entries of the subjectAltName.
    public var sanEmails: [String] { subjectAltNames(type: GEN_EMAIL) }

    /// The dNSName entries of the subjectAltName.
    public var sanDNSNames: [String] { subjectAltNames(type: GEN_DNS) }

    /// The email the certificate is tagged with: SAN rfc822Name first, else the subject's emailAddress.
    public var email: String? { sanEmails.first ?? subjectEmail }

    private func subjectAltNames(type: Int32) -> [String] {
        guard let raw = X509_get_ext_d2i(pointer, NID_subject_alt_name, nil, nil) else { return [] }
        let names = OpaquePointer(raw)
        defer { CTLS_GENERAL_NAMES_free(names) }
        var result: [String] = []
        for index in 0..<CTLS_sk_GENERAL_NAME_num(names) {
            guard let name = CTLS_sk_GENERAL_NAME_value(names, index), name.pointee.type == type,
                  let ia5 = name.pointee.d.ia5 else { continue }
            result.append(String(decoding: Certificate.bytes(of: ia5), as: UTF8.self))
        }
        return result
    }
}

extension Certificate {
    /// The `caIssuers` URLs of the Authority Information Access extension (RFC 5280 §4.2.2.1):
    /// where the certificate of the CA that issued this one can be downloaded.
    public var caIssuersURLs: [String] {
        guard let raw = X509_get_ext_d2i(pointer, NID_info_access, nil, nil) else { return [] }
        let access = OpaquePointer(raw)
        defer { AUTHORITY_INFO_ACCESS_free(access) }
        var result: [String] = []
        for index in 0..<OPENSSL_sk_num(access) {
            guard let description = OPENSSL_sk_value(access, index)?.assumingMemoryBound(to: ACCESS_DESCRIPTION.self),
                  OBJ_obj2nid(description.pointee.method) == NID_ad_ca_issuers,
                  let location = description.pointee.location, location.pointee.type == GEN_URI,
                  let ia5 = location.pointee.d.uniformResourceIdentifier else { continue }
            result.append(String(decoding: Certificate.bytes(of: ia5), as: UTF8.self))
        }
        return result
    }

    /// Whether `issuer`'s subject (and key identifier, where both have one) is this
    /// certificate's issuer; the signature is not checked (`isIssued(by:)` does).
    public func names(asIssuer issuer: Certificate) -> Bool {
        X509_check_issued(issuer.pointer, pointer) == X509_V_OK
    }

    /// Whether the certificate names itself as its issuer (a root, or one posing as one).
    public var isSelfIssued: Bool { X509_check_issued(pointer, pointer) == X509_V_OK }

    /// The certificates in what an AIA `caIssuers` URL serves: one DER certificate, a
    /// "certs-only" PKCS #7 (`application/pkcs7-mime`, RFC 5280 §4.2.2.1), or PEM.
    /// - Throws: `.corruptCertificate` when none of them parses.
    public static func all(fromIssuerDownload bytes: [UInt8]) throws -> [Certificate] {
        if let certificates = try? all(from: bytes) { return certificates }
        OpenSSLErrorQueue.clear()
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS7(nil, &cursor, buffer.count)
        }
        guard let pkcs7 = parsed else {
            throw CAError(.corruptCertificate, "neither a DER certificate nor a PKCS #7 bundle of certificates")
        }
        defer { PKCS7_free(pkcs7) }
        guard OBJ_obj2nid(pkcs7.pointee.type) == NID_pkcs7_signed, let signed = pkcs7.pointee.d.sign,
              let stack = signed.pointee.cert, CTLS_sk_X509_num(stack) > 0 else {
            throw CAError(.corruptCertificate, "a PKCS #7 bundle without certificates")
        }
        return (0..<CTLS_sk_X509_num(stack)).compactMap { CTLS_sk_X509_value(stack, $0).map(Certificate.init(copying:)) }
    }
}
