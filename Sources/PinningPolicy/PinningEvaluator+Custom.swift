import CertAuthority
import Foundation

extension PinningEvaluator {
    /// A hand-written pinner (`CustomPinner`): platform trust first, then the SHA-256 of each
    /// examined certificate in the pinner's form, leaf to anchor, against its pins.
    static func custom(_ policy: PinningPolicy, _ host: String, _ verification: ChainVerification) -> PinEvaluation {
        let entry = policy.entry(for: host)
        var result = PinEvaluation(source: .custom, validationResult: nil, decision: .domainNotPinned,
                                   notedHostname: entry?.pattern, entry: entry, evaluatedChain: verification.path ?? [],
                                   reason: "", reportURIs: [], connects: verification.isVerified)
        guard let entry, let pinner = policy.customPinner else {
            result.reason = "\(host) is not among the pinner's hosts"
            return result
        }
        guard case .verified(let path) = verification else {
            // SecTrustEvaluateWithError fails first; the delegate cancels before hashing.
            (result.validationResult, result.decision) = (.failedInvalidCertificateChain, .shouldBlockConnection)
            result.reason = "the certificate chain is not trusted, so the pinner cancels before hashing"
            return result
        }
        for certificate in pinner.examined(path) {
            guard let digest = pinner.hash.digest(of: certificate) else { continue }
            if let pin = entry.pins.first(where: { $0.digest == digest }) {
                (result.validationResult, result.decision) = (.success, .shouldAllowConnection)
                (result.matchedCertificate, result.matchedPin) = (certificate, pin)
                result.reason = "the \(pinner.hash.rawValue) hash of \(certificate.subject) is pinned (\(pin.base64))"
                return result
            }
        }
        result.validationResult = .failedNoMatchingPin
        let looked = pinner.scope == .leaf ? "the leaf's" : pinner.scope == .ca ? "no CA certificate's" : "no certificate's"
        if entry.enforce {
            result.decision = .shouldBlockConnection
            result.connects = false
            result.reason = pinner.scope == .leaf ? "\(looked) \(pinner.hash.rawValue) hash is not pinned"
                : "\(looked) \(pinner.hash.rawValue) hash is pinned"
        } else {
            result.decision = .shouldAllowConnection
            result.reason = "no pin matches, but \(pinner.name) does not enforce"
        }
        return result
    }
}
