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
