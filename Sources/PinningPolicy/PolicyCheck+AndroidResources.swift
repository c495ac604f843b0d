import CertAuthority
import Foundation

/// Android `<certificates src="@raw/name"/>` trust anchors in `policy check`: read when the app's
/// resources were given, else each verdict that turns on them is `uncertain` and says why.
extension PolicyCheck {
    /// Every `@raw/` resource an Android policy names as a trust anchor, in order.
    public static func rawResources(of policy: PinningPolicy) -> [String] {
        let anchors = policy.baseTrustAnchors + policy.debugOverrideAnchors + policy.domains.flatMap(\.trustAnchors)
        var seen: Set<String> = []
        return anchors.compactMap { anchor in
            guard case .resource(let name) = anchor.store, name.hasPrefix("@raw/"), seen.insert(name).inserted else { return nil }
            return name
        }
    }

    /// Reads every `@raw/` trust anchor an Android `policy` names from the app's `resources` into
    /// `context`, as `policy check` and `pin-check` both do.
    ///
    /// - Returns: one warning per resource that could not be read (the verdicts that depend on it
    ///   then say so); empty for a policy of another library.
    public static func readRawResources(of policy: PinningPolicy, from resources: AndroidResources,
                                        into context: inout EvaluationContext) -> [String] {
        guard policy.source == .androidNSC else { return [] }
        context.androidResourcesLookedFor = true
        var warnings: [String] = []
        for name in rawResources(of: policy) {
            do {
                context.androidResources[name] = try AndroidRawResource.read(name, from: resources)
            } catch let error as PolicyError {
                warnings.append("\(error.reason); the verdicts that depend on it say so")
            } catch {
                warnings.append("\(name): \(error)")
            }
        }
        return warnings
    }

    /// Why an Android `evaluation` of a live chain is not certain: it turns on `@raw/` resources
    /// nobody read (`pin-check` without the app's resources), in `policy check`'s words.
    ///
    /// - Returns: the reason, or nil when the verdict is the same whatever they hold.
    public static func unreadResourceDependency(policy: PinningPolicy, host: String, verification: ChainVerification,
                                                evaluation: PinEvaluation, at now: Date,
                                                context: EvaluationContext) -> String? {
        guard policy.source == .androidNSC else { return nil }
        var prediction = HostPrediction(host: host, policyDomain: evaluation.notedHostname, decision: name(of: evaluation.decision),
                                        result: evaluation.validationResult?.rawValue, reason: evaluation.reason)
        applyUnreadResources(policy: policy, host: host, verification: verification, at: now, context: context, to: &prediction)
        return prediction.decision == "uncertain" ? prediction.reason : nil
    }

    /// Makes an Android prediction `uncertain` when it turns on `@raw/` resources nobody read:
    /// evaluated again as if they held the chain's anchor, a different outcome means the verdict
    /// depends on them, and the reason gives both.
    static func applyUnreadResources(policy: PinningPolicy, host: String, verification: ChainVerification, at now: Date,
                                     context: EvaluationContext, to prediction: inout HostPrediction) {
        guard let anchor = verification.path?.last else { return }
        let anchors = policy.entry(for: host)?.trustAnchors ?? policy.baseTrustAnchors
        let unread = anchors.compactMap { reference -> String? in
            guard case .resource(let name) = reference.store, context.androidResources[name] == nil else { return nil }
            return name
        }
        guard !unread.isEmpty else { return }
        var holding = context
        for name in unread { holding.androidResources[name] = AndroidRawResource(file: name, certificates: [anchor]) }
        let other = PinningEvaluator.evaluate(policy: policy, host: host, verification: verification, at: now, context: holding)
        let otherDecision = name(of: other.decision)
        guard otherDecision != prediction.decision || other.validationResult?.rawValue != prediction.result else { return }
        func outcome(_ decision: String, _ result: Int?, _ reason: String) -> String {
            "\(decision.replacingOccurrences(of: "_", with: " "))\(result.map { " (result \($0))" } ?? ""): \(reason)"
        }
        let names = unread.joined(separator: " and ")
        prediction.reason = "depends on \(names), which DevProxy has not read: if it holds \(anchor.subject): "
            + outcome(otherDecision, other.validationResult?.rawValue, other.reason) + "; if not: "
            + outcome(prediction.decision, prediction.result, prediction.reason)
            + (context.androidResourcesLookedFor ? "; see the warning about it"
                : "; give the app's res directory with --res DIR to decide")
        (prediction.decision, prediction.result) = ("uncertain", nil)
    }
}
