import CertAuthority
import Foundation

extension PinningEvaluator {
    /// ATS identity pinning (`NSPinnedDomains`): after the default trust evaluation, a CA identity
    /// matches the SPKI SHA-256 of any CA or sub-CA certificate of the evaluated chain (anchor
    /// included), a leaf identity only the leaf's (Apple: NSPinnedCAIdentities,
    /// NSPinnedLeafIdentities).
    static func ats(_ policy: PinningPolicy, _ host: String, _ verification: ChainVerification) -> PinEvaluation {
        let entry = policy.entry(for: host)
        var result = PinEvaluation(source: .ats, validationResult: nil, decision: .domainNotPinned,
                                   notedHostname: entry?.pattern, entry: entry, evaluatedChain: verification.path ?? [],
                                   reason: "", reportURIs: [], connects: verification.isVerified)
        guard let entry, let pinned = policy.ats?.pinnedDomain(for: host),
              pinned.caIdentities != nil || pinned.leafIdentities != nil else {
            result.reason = "\(host) is not in NSPinnedDomains"
            return result
        }
        guard case .verified(let path) = verification else {
            (result.validationResult, result.decision) = (.failedInvalidCertificateChain, .shouldBlockConnection)
            result.reason = "the certificate chain is not trusted"
            return result
        }
        let candidates: [(Certificate, [Pin], String)] =
            path.prefix(1).map { ($0, pinned.leafIdentities ?? [], "NSPinnedLeafIdentities") }
            + path.dropFirst().map { ($0, pinned.caIdentities ?? [], "NSPinnedCAIdentities") }
        for (certificate, pins, key) in candidates {
            let digest = Digest.sha256(certificate.spkiDER)
            if let pin = pins.first(where: { $0.digest == digest }) {
                (result.validationResult, result.decision) = (.success, .shouldAllowConnection)
                (result.matchedCertificate, result.matchedPin) = (certificate, pin)
                result.reason = "\(key) \(pin.base64) matches \(certificate.subject)"
                return result
            }
        }
        (result.validationResult, result.decision, result.connects) = (.failedNoMatchingPin, .shouldBlockConnection, false)
        let lists = [pinned.caIdentities.map { "\($0.count) CA" }, pinned.leafIdentities.map { "\($0.count) leaf" }]
            .compactMap { $0 }.joined(separator: " and ")
        result.reason = "no certificate of the chain matches \(entry.pattern)'s \(lists) identities"
        return result
    }
}
