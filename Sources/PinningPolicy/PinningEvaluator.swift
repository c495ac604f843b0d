import CertAuthority
import Foundation

/// Decides, as the pinned client would, whether a connection to `host` with a given chain goes
/// ahead: TrustKit `-[TSKPinningValidator evaluateTrust:forHostname:]`, NSC
/// `NetworkSecurityTrustManager.checkPins`, OkHttp `CertificatePinner.check`.
public enum PinningEvaluator {
    /// The TrustKit default report endpoint, added unless `TSKDisableDefaultReportUri`.
    public static let trustKitDefaultReportURI = "https://overmind.datatheorem.com/trustkit/report"

    /// Evaluates one connection.
    ///
    /// - Parameters:
    ///   - policy: the app's policy.
    ///   - host: the host the app connected to (TrustKit: `protectionSpace.host`).
    ///   - verification: the chain as the platform verified it *for this host* (a name mismatch
    ///     must already be a failure, as TrustKit forces an SSL policy with the host name).
    ///   - date: "now" for expiration checks.
    ///   - context: client facts not in the policy.
    public static func evaluate(policy: PinningPolicy, host: String, verification: ChainVerification, at date: Date,
                                context: EvaluationContext = EvaluationContext()) -> PinEvaluation {
        switch policy.source {
        case .trustKit: return trustKit(policy, host, verification, date, context)
        case .androidNSC: return android(policy, host, verification, date, context)
        case .okHttp: return okHttp(policy, host, verification)
        case .custom: return custom(policy, host, verification)
        case .ats: return ats(policy, host, verification)
        }
    }

    /// TrustKit iOS, §2.4–2.5 of the pinning spec.
    private static func trustKit(_ policy: PinningPolicy, _ host: String, _ verification: ChainVerification,
                                 _ date: Date, _ context: EvaluationContext) -> PinEvaluation {
        var result = PinEvaluation(source: .trustKit, validationResult: nil, decision: .domainNotPinned,
                                   evaluatedChain: verification.path ?? [], reason: "",
                                   reportURIs: [], connects: verification.isVerified)
        guard !host.isEmpty else {
            // TrustKit returns ShouldBlockConnection without a callback for a nil hostname; we
            // label it ErrorInvalidParameters for the caller's benefit.
            (result.validationResult, result.decision, result.connects) = (.errorInvalidParameters, .shouldBlockConnection, false)
            result.reason = "no host name"
            return result
        }
        guard let entry = context.trustKitMatcher.lookup(host, in: policy.domains) else {
            result.reason = "\(host) is not pinned"
            return result
        }
        result.notedHostname = entry.pattern
        result.entry = entry
        if entry.isExpired(at: date) {
            result.reason = "the policy for \(entry.pattern) has expired; pinning is skipped"
            return result
        }
        if entry.excludedFromParent {
            result.reason = "\(entry.pattern) is excluded from its parent's policy"
            return result
        }
        let outcome: TrustEvaluationResult
        switch verification {
        case .failed(let reason, _):
            outcome = .failedInvalidCertificateChain
            result.reason = "the certificate chain is not trusted: \(reason)"
        case .verified(let path):
            outcome = trustKitPinCheck(path, entry.pins, into: &result)
        }
        result.validationResult = outcome
        switch outcome {
        case .success:
            result.decision = .shouldAllowConnection
        case .failedNoMatchingPin:
            result.decision = entry.enforce ? .shouldBlockConnection : .shouldAllowConnection
            result.reason = entry.enforce ? "no certificate in the chain matches a pin of \(entry.pattern)"
                : "no pin matches, but \(entry.pattern) is report-only (TSKEnforcePinning NO)"
        default:
            // enforcePinning = NO only relaxes FailedNoMatchingPin.
            result.decision = .shouldBlockConnection
        }
        result.connects = result.decision == .shouldAllowConnection
        if outcome != .success {
            result.reportURIs = entry.reportURIs + (entry.disablesDefaultReportURI ? [] : [trustKitDefaultReportURI])
        }
        return result
    }

    /// Anchor → leaf, TrustKit's hash; an unhashable key aborts at once (`ssl_pin_verifier.m`).
    private static func trustKitPinCheck(_ path: [Certificate], _ pins: [Pin],
                                         into result: inout PinEvaluation) -> TrustEvaluationResult {
        for certificate in path.reversed() {
            guard let hash = TrustKitKeyHash.hash(of: certificate) else {
                result.reason = "TrustKit cannot hash the \(certificate.keyDescription) key of \(certificate.subject)"
                return .errorCouldNotGenerateSpkiHash
            }
            if let pin = pins.first(where: { $0.algorithm == .sha256 && $0.digest == hash }) {
                (result.matchedCertificate, result.matchedPin) = (certificate, pin)
                result.reason = "\(pin) matches \(certificate.subject)"
                return .success
            }
        }
        return .failedNoMatchingPin
    }

    /// Android NSC, §4.3–4.5 of the pinning spec.
    private static func android(_ policy: PinningPolicy, _ host: String, _ verification: ChainVerification,
                                _ date: Date, _ context: EvaluationContext) -> PinEvaluation {
        let entry = policy.entry(for: host)
        let anchors = entry?.trustAnchors ?? policy.baseTrustAnchors
        let store = context.androidAnchorStore
        var result = PinEvaluation(source: .androidNSC, validationResult: nil, decision: .domainNotPinned,
                                   notedHostname: entry?.pattern, entry: entry,
                                   evaluatedChain: verification.path ?? [], reason: "", reportURIs: [],
                                   connects: false)
        // A source holds the chain's anchor when it is where the root is installed, or a resource
        // read holding a certificate of the path (`findTrustAnchorBySubjectAndPublicKey`).
        func holdsAnchor(_ source: TrustAnchorReference.Store) -> Bool {
            if source == store { return true }
            guard case .resource(let name) = source, let resource = context.androidResources[name] else { return false }
            return (verification.path ?? []).contains(where: resource.holds)
        }
        // The platform trust manager runs first; pins are consulted only for a trusted chain.
        let trusted = verification.isVerified && anchors.contains { holdsAnchor($0.store) }
        result.connects = trusted
        // A chain the config does not trust is refused before any pin is looked at, a host with no
        // pin-set (or an expired one) included: a config trusting only `system` anchors refuses
        // the user-installed DevProxy root everywhere (Android's default for targetSdk 24+).
        guard trusted, let path = verification.path else {
            // Resources read and found wanting are named, so the reader sees they were looked at.
            let read = anchors.compactMap { anchor -> String? in
                guard case .resource(let name) = anchor.store, let resource = context.androidResources[name] else { return nil }
                return "\(name) (read from \(resource.file)) does not hold it"
            }
            let why = verification.path == nil ? "the chain is not trusted" : "Trust anchor for certification path not "
                + "found (the anchor is in the \(store) store, which this config does not trust"
                + (read.isEmpty ? "" : "; " + read.joined(separator: "; ")) + ")"
            (result.validationResult, result.decision, result.reason) = (.failedInvalidCertificateChain, .shouldBlockConnection, why)
            result.reportURIs = trustKitAndroidReportURIs(entry)
            return result
        }
        guard let entry, !entry.pins.isEmpty else {
            result.reason = "\(host) has no pin-set"
            return result
        }
        if entry.isExpired(at: date) {
            result.reason = "the pin-set of \(entry.pattern) has expired; pinning is skipped"
            return result
        }
        // Overriding refs win over non-overriding ones for the same CA (they are sorted first).
        if let overriding = anchors.first(where: { holdsAnchor($0.store) && $0.overridesPins }) {
            result.reason = overriding.store == store ? "the \(store) trust anchors override pins"
                : "the \(overriding.store) trust anchors hold the chain's anchor and override pins"
            return result
        }
        if let (certificate, pin) = standardMatch(path.reversed(), entry.pins) {
            (result.validationResult, result.decision) = (.success, .shouldAllowConnection)
            (result.matchedCertificate, result.matchedPin) = (certificate, pin)
            result.reason = "\(pin) matches \(certificate.subject)"
        } else if entry.trustKitAndroid, !entry.enforce {
            // `PinningTrustManager`: the platform's "Pin verification failed" is reported, and
            // thrown only when enforcing; the allow holds for its socket factory's connections alone.
            (result.validationResult, result.decision) = (.failedNoMatchingPin, .shouldAllowConnection)
            result.reason = "no pin matches, but TrustKit-Android does not enforce for \(entry.pattern) "
                + "(enforcePinning false, its default): the mismatch is reported, and the entry is "
                + PinnedDomain.trustKitAndroidReportOnlyReach
            result.reportURIs = trustKitAndroidReportURIs(entry)
        } else {
            (result.validationResult, result.decision, result.connects) = (.failedNoMatchingPin, .shouldBlockConnection, false)
            result.reason = "Pin verification failed"
            result.reportURIs = trustKitAndroidReportURIs(entry)
        }
        return result
    }

    /// Where TrustKit-Android reports a failure for `entry`: its `<report-uri>`s plus the default
    /// collector unless `disableDefaultReportUri` (`DomainPinningPolicy`); none without
    /// TrustKit-Android or for a domain with no pins, which it does not validate.
    private static func trustKitAndroidReportURIs(_ entry: PinnedDomain?) -> [String] {
        guard let entry, entry.trustKitAndroid, !entry.pins.isEmpty else { return [] }
        return entry.reportURIs + (entry.disablesDefaultReportURI ? [] : [trustKitDefaultReportURI])
    }

    /// OkHttp `CertificatePinner.check`, §5 of the pinning spec.
    private static func okHttp(_ policy: PinningPolicy, _ host: String, _ verification: ChainVerification) -> PinEvaluation {
        let entries = policy.entries(for: host)
        var result = PinEvaluation(source: .okHttp, validationResult: nil, decision: .domainNotPinned,
                                   notedHostname: entries.first?.pattern, entry: entries.first,
                                   evaluatedChain: verification.path ?? [], reason: "", reportURIs: [],
                                   connects: verification.isVerified)
        guard !entries.isEmpty else {
            result.reason = "no pattern matches \(host)"
            return result
        }
        guard case .verified(let path) = verification else {
            // The handshake (or the chain cleaner) fails before the pinner is consulted.
            (result.validationResult, result.decision) = (.failedInvalidCertificateChain, .shouldBlockConnection)
            result.reason = "the certificate chain is not trusted"
            return result
        }
        let pins = entries.flatMap(\.pins)
        if let (certificate, pin) = standardMatch(path, pins) {
            (result.validationResult, result.decision) = (.success, .shouldAllowConnection)
            (result.matchedCertificate, result.matchedPin) = (certificate, pin)
            result.reason = "\(pin) matches \(certificate.subject)"
        } else {
            (result.validationResult, result.decision, result.connects) = (.failedNoMatchingPin, .shouldBlockConnection, false)
            result.reason = "Certificate pinning failure!"
        }
        return result
    }

    /// The first certificate (in the given order) whose standard SPKI digest is among `pins`.
    private static func standardMatch<C: Sequence>(_ chain: C, _ pins: [Pin]) -> (Certificate, Pin)?
        where C.Element == Certificate {
        for certificate in chain {
            let spki = certificate.spkiDER
            let sha256 = Digest.sha256(spki)
            lazy var sha1 = Digest.sha1(spki)
            for pin in pins {
                let digest = pin.algorithm == .sha256 ? sha256 : sha1
                if pin.digest == digest { return (certificate, pin) }
            }
        }
        return nil
    }
}
