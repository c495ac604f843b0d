import CTLS
import Foundation

extension LeafIssuer {
    /// A leaf for `names` certifying a given public key, whose private half DevProxy does not
    /// hold: what `devproxy run --leaf-key` would serve for that key, for `policy check --leaf-key`
    /// to predict what a pinner decides. Never served: there is no key to sign a handshake with.
    ///
    /// The same profile, validity and name checks as `issue(for:now:)`.
    /// - Parameter spkiDER: the key, as a DER SubjectPublicKeyInfo.
    /// - Throws: `.invalidInput` when the key cannot be read or is one of the signer's chain,
    ///   `.nameNotPermitted` and `.signerExpired` as `issue` does.
    public func certificate(for names: [LeafName], certifying spkiDER: [UInt8], now: Date = Date()) throws -> Certificate {
        guard !names.isEmpty else { throw CAError(.invalidInput, "a leaf needs at least one name") }
        try signer.checkValidity(at: now)
        if let outside = names.first(where: { !signer.permits($0) }) {
            throw CAError(.nameNotPermitted, "\(outside) is outside the intermediate's permitted domains (\(signer.permittedDNS.joined(separator: ", ")))")
        }
        let issuerCertificate = signer.certificate
        guard !([issuerCertificate] + signer.chain + [signer.root].compactMap { $0 }).contains(where: { $0.spkiDER == spkiDER }) else {
            throw CAError(.invalidInput, "a leaf key must not be a CA's key")
        }
        OpenSSLErrorQueue.clear()
        let decoded: OpaquePointer? = spkiDER.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let decoded else { throw CAError.openSSL("reading the leaf's public key") }
        // CertificateBuilder takes the subject's key as the EVP_PKEY's owner; a public-only
        // EVP_PKEY is all X509_set_pubkey reads.
        let subjectKey = PrivateKey(takingOwnership: decoded)
        let notBefore = max(now.addingTimeInterval(-backdate), issuerCertificate.notBefore)
        let notAfter = min(now.addingTimeInterval(lifetime), issuerCertificate.notAfter)
        return try CertificateProfile.leaf(names: names, notBefore: notBefore, notAfter: notAfter, rsa: subjectKey.isRSA)
            .sign(publicKey: subjectKey, issuer: issuerCertificate, issuerKey: signer.key)
    }
}
