import Foundation

/// A minted leaf: the certificate, its own fresh key, and the chain to send after it.
public final class Leaf: Sendable {
    public let certificate: Certificate
    public let key: PrivateKey
    /// The intermediate(s) to send after the leaf; the root is the client's trust anchor.
    public let chain: [Certificate]
    /// The signer's certificate (serial and email go into flow records).
    public let issuer: Certificate

    init(certificate: Certificate, key: PrivateKey, chain: [Certificate], issuer: Certificate) {
        self.certificate = certificate
        self.key = key
        self.chain = chain
        self.issuer = issuer
    }
}

/// Mints per-host leaves from a `Signer`.
///
/// Leaves: SAN always present, EKU serverAuth, keyUsage digitalSignature, AKI = issuer SKI,
/// random 127-bit serials, a fresh key of their own (or a `--leaf-key` one; never the CA's), not-after =
/// min(issuer's not-after, now + 30 days), not-before one hour back for clock skew but never
/// before the issuer's not-before.
public struct LeafIssuer: Sendable {
    public let signer: Signer
    public let keyType: KeyType
    /// How long a leaf lives at most.
    public var lifetime: TimeInterval = 30 * 24 * 3600
    /// How far not-before is backdated for clients whose clocks run slow.
    public var backdate: TimeInterval = CertificateProfile.backdate
    /// Hosts whose leaves carry a fixed key (`--leaf-key`) instead of a fresh one. Default none.
    public var fixedKeys: [FixedLeafKey] = []

    public init(signer: Signer, keyType: KeyType = .p256) {
        self.signer = signer
        self.keyType = keyType
    }

    /// Issues a leaf for `names` (the first becomes the CN).
    ///
    /// - Throws: `.nameNotPermitted` when a name falls outside the signer's name constraints
    ///   (the proxy passes such hosts through), `.signerExpired` when the signer has expired,
    ///   `.invalidInput` for an empty list.
    public func issue(for names: [LeafName], now: Date = Date()) throws -> Leaf {
        guard !names.isEmpty else { throw CAError(.invalidInput, "a leaf needs at least one name") }
        try signer.checkValidity(at: now)
        if let outside = names.first(where: { !signer.permits($0) }) {
            throw CAError(.nameNotPermitted, "\(outside) is outside the intermediate's permitted domains (\(signer.permittedDNS.joined(separator: ", ")))")
        }
        let issuerCertificate = signer.certificate
        let notBefore = max(now.addingTimeInterval(-backdate), issuerCertificate.notBefore)
        let notAfter = min(now.addingTimeInterval(lifetime), issuerCertificate.notAfter)
        let key = try fixedKeys.key(for: names[0]) ?? PrivateKey.generate(keyType)
        if !fixedKeys.isEmpty, let spki = try? key.publicKeyDER,
           ([issuerCertificate] + signer.chain + [signer.root].compactMap { $0 }).contains(where: { $0.spkiDER == spki }) {
            throw CAError(.invalidInput, "a leaf key must not be a CA's key")
        }
        let certificate = try CertificateProfile.leaf(names: names, notBefore: notBefore, notAfter: notAfter, rsa: key.isRSA)
            .sign(publicKey: key, issuer: issuerCertificate, issuerKey: signer.key)
        return Leaf(certificate: certificate, key: key, chain: signer.chain, issuer: issuerCertificate)
    }
}
