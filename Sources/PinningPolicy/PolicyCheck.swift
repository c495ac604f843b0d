import CertAuthority
import Foundation

/// `devproxy policy check` as a value: validate a policy as its library would, lint it, and
/// predict the app's decision for the chain DevProxy would present (or a given chain).
public struct PolicyCheck: Sendable {
    /// The chain to predict against.
    public enum PresentedChain: Sendable {
        /// A leaf minted on the spot per host by `issuer`, verified against `teamRoot`.
        case minted(issuer: LeafIssuer, teamRoot: Certificate)
        /// A fixed served chain (leaf first), verified against `anchors` plus the system store.
        case served([Certificate], anchors: [Certificate])
    }

    /// One host's predicted outcome.
    public struct HostPrediction: Codable, Sendable, Equatable {
        public var host: String
        /// The matched policy key (TrustKit domain, NSC `<domain>`, OkHttp pattern), or nil.
        public var policyDomain: String?
        /// `allow`, `block` or `not_pinned`.
        public var decision: String
        /// `validation-result` (0–5), or nil when validation was not reached.
        public var result: Int?
        /// One human line.
        public var reason: String
        /// ATS only: `meets`, `refuses` or `uncertain` for the TLS requirements, and why.
        public var transport: ATSTransportPrediction.Verdict?
        public var transportReasons: [String]?

        public init(host: String, policyDomain: String?, decision: String, result: Int?, reason: String,
                    transport: ATSTransportPrediction.Verdict? = nil, transportReasons: [String]? = nil) {
            (self.host, self.policyDomain, self.decision, self.result, self.reason) = (host, policyDomain, decision, result, reason)
            (self.transport, self.transportReasons) = (transport, transportReasons)
        }

        enum CodingKeys: String, CodingKey {
            case host, decision, result, reason, transport
            case policyDomain = "policy_domain", transportReasons = "transport_reasons"
        }

        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(host, forKey: .host)
            try container.encode(policyDomain, forKey: .policyDomain)
            try container.encode(decision, forKey: .decision)
            try container.encode(result, forKey: .result)
            try container.encode(reason, forKey: .reason)
            try container.encodeIfPresent(transport, forKey: .transport)
            try container.encodeIfPresent(transportReasons, forKey: .transportReasons)
        }
    }

    /// Everything `policy check --json` prints.
    public struct Report: Codable, Sendable, Equatable {
        public var errors: [String]
        public var warnings: [String]
        public var hosts: [HostPrediction]
        /// The library the policy was written for, when it parsed.
        public var source: PolicySource?
    }

    /// The team root, for the "pins don't include the team root" lint; nil skips it.
    public var teamRoot: Certificate?
    public var presented: PresentedChain?
    /// Android: which store holds the team root on the device. Default `.user`.
    public var context: EvaluationContext
    /// ATS: what the TLS listener offers the app. Default `.devProxy`.
    public var offer: TLSOffer = .devProxy
    /// Read the file as this kind instead of guessing. Default nil (guess).
    public var kind: PolicySource?
    /// Certificates the pins are meant to match (production's), for the lints only. Default none.
    public var expected: [Certificate] = []
    /// A team root rotation under way, for the retiring-root lint. Default none.
    public var rotation: PolicyLinter.Rotation? = nil
    /// The key (DER SubjectPublicKeyInfo) minted leaves carry instead of a fresh one, as
    /// `devproxy run --leaf-key` serves them: a leaf-only pinner holding its pin then matches.
    /// Only for `.minted`. Default nil (a fresh key per leaf).
    public var leafKey: [UInt8]? = nil
    /// Android: the app's resources, whose `raw/` holds the `@raw/name` trust anchors the policy
    /// names. Default nil: none is read, and a verdict that depends on one says so.
    public var androidResources: AndroidResources? = nil

    public init(teamRoot: Certificate?, presented: PresentedChain?, context: EvaluationContext = EvaluationContext()) {
        self.teamRoot = teamRoot
        self.presented = presented
        self.context = context
    }

    /// Checks the policy bytes.
    ///
    /// - Parameters:
    ///   - hosts: hosts to predict; empty means one per pinned entry.
    ///   - now: "now" for expirations and minting.
    public func run(policy data: Data, hosts: [String] = [], now: Date = Date()) -> Report {
        let policy: PinningPolicy
        do {
            policy = try PolicyLoader.load(data: data, kind: kind)
        } catch let error as PolicyError {
            return Report(errors: [error.reason], warnings: [], hosts: [], source: kind ?? PolicyLoader.detect(data))
        } catch {
            return Report(errors: ["\(error)"], warnings: [], hosts: [], source: nil)
        }
        var warnings = policy.warnings
        let targets = hosts.isEmpty ? Self.representativeHosts(policy) : hosts
        var chains: [String: [Certificate]] = [:]
        if case .served(let chain, _) = presented {
            for entry in policy.domains { chains[entry.pattern] = chain }
        }
        // Pins DevProxy's chain satisfies: the team root's, and the presenting intermediate's (an
        // app that pins the engineer's own intermediate is decrypted; it was warned it would block).
        var decryptablePins = teamRoot.map(Self.pins(of:)) ?? []
        if case .minted(let issuer, _) = presented { decryptablePins += issuer.signer.chain.flatMap(Self.pins(of:)) }
        if let leafKey { decryptablePins += [Pin(.sha256, digest: Digest.sha256(leafKey)), Pin(.sha1, digest: Digest.sha1(leafKey))] }
        var linter = PolicyLinter(teamRootPins: decryptablePins, chains: chains)
        (linter.teamRoot, linter.expected, linter.rotation) = (teamRoot, expected, rotation)
        warnings += linter.lint(policy, at: now).map(\.description)
        var context = context
        if let androidResources {
            warnings += Self.readRawResources(of: policy, from: androidResources, into: &context)
        }
        var predictions: [HostPrediction] = []
        if presented == nil {
            warnings.append("no CA directory with a root and no --chain: decisions were not predicted")
        }
        for host in targets {
            guard let verification = verification(for: host, now: now, warnings: &warnings) else {
                // ATS's TLS requirements need no chain: predict them even without a CA.
                if let ats = policy.ats {
                    var prediction = HostPrediction(host: host, policyDomain: ats.pinnedDomain(for: host)?.name, decision: "allow",
                                                    result: nil, reason: "pinning not predicted (no chain)")
                    Self.apply(ats.transport(for: host, offer: offer), to: &prediction)
                    predictions.append(prediction)
                }
                continue
            }
            let evaluation = PinningEvaluator.evaluate(policy: policy, host: host, verification: verification, at: now,
                                                       context: context)
            let decision = Self.name(of: evaluation.decision)
            var prediction = HostPrediction(host: host, policyDomain: evaluation.notedHostname, decision: decision,
                                            result: evaluation.validationResult?.rawValue, reason: evaluation.reason)
            if policy.source == .androidNSC {
                Self.applyUnreadResources(policy: policy, host: host, verification: verification, at: now, context: context,
                                          to: &prediction)
            }
            if let ats = policy.ats { Self.apply(ats.transport(for: host, offer: offer), to: &prediction) }
            predictions.append(prediction)
        }
        return Report(errors: [], warnings: warnings, hosts: predictions, source: policy.source)
    }

    /// `allow`, `block` or `not_pinned`.
    static func name(of decision: TrustDecision) -> String {
        switch decision {
        case .shouldAllowConnection: return "allow"
        case .shouldBlockConnection: return "block"
        case .domainNotPinned: return "not_pinned"
        }
    }

    /// Folds ATS's TLS verdict into a host's prediction: a refusal blocks whatever pinning says;
    /// an undocumented outcome makes an allowed connection `uncertain`.
    static func apply(_ transport: ATSTransportPrediction, to prediction: inout HostPrediction) {
        prediction.transport = transport.verdict
        prediction.transportReasons = transport.reasons
        switch transport.verdict {
        case .meets:
            break
        case .refuses:
            if prediction.decision != "block" {
                (prediction.reason, prediction.result) = ("ATS: " + transport.reasons.joined(separator: "; "), nil)
            }
            prediction.decision = "block"
        case .uncertain:
            if prediction.decision != "block" {
                prediction.decision = "uncertain"
                prediction.reason += "; ATS TLS outcome undocumented"
            }
        }
    }

    /// The verification of the presented chain for `host`, or nil when nothing is presented.
    private func verification(for host: String, now: Date, warnings: inout [String]) -> ChainVerification? {
        // An absolute name (`api.acme.test.`) is checked against the certificate without its
        // trailing dot, as clients do (OkHttp's hostname verifier, RFC 6125 §6.2.1): the chain
        // was predicted "not trusted" where a real client took it.
        let host = host.hasSuffix(".") && host.count > 1 ? String(host.dropLast()) : host
        switch presented {
        case nil:
            return nil
        case .served(let chain, let anchors):
            return ChainVerifier(trustAnchors: anchors, useSystemTrustStore: true, verificationTime: now)
                .verify(chain: chain, host: host)
        case .minted(let issuer, let teamRoot):
            do {
                let names = [try LeafName(host)]
                let leaf = try leafKey.map { try issuer.certificate(for: names, certifying: $0, now: now) }
                    ?? issuer.issue(for: names, now: now).certificate
                return ChainVerifier(trustAnchors: [teamRoot], verificationTime: now)
                    .verify(chain: [leaf] + issuer.signer.chain, host: host)
            } catch let error as CAError where error.code == .nameNotPermitted {
                warnings.append("\(host): outside the intermediate's permitted domains; DevProxy passes it through "
                                + "undecrypted (predicted as a permitted-subtree violation)")
                return .failed(reason: "permitted subtree violation", code: 47)
            } catch {
                warnings.append("\(host): cannot mint a leaf (\(error)); no prediction")
                return nil
            }
        }
    }

    /// Every pin form that names `certificate`'s key: SHA-256 SPKI, TrustKit's hash, SHA-1 SPKI.
    public static func pins(of certificate: Certificate) -> [Pin] {
        let spki = certificate.spkiDER
        var pins = [Pin(.sha256, digest: Digest.sha256(spki)), Pin(.sha1, digest: Digest.sha1(spki))]
        if let trustKit = TrustKitKeyHash.hash(of: certificate), trustKit != pins[0].digest {
            pins.append(Pin(.sha256, digest: trustKit))
        }
        return pins
    }

    /// One host per pinned entry: the name itself; for OkHttp `*.x` → `www.x`, `**.x` → `x`.
    public static func representativeHosts(_ policy: PinningPolicy) -> [String] {
        if let ats = policy.ats { return ats.namedHosts }
        var seen: Set<String> = []
        return policy.domains.filter { !$0.excludedFromParent && !$0.pins.isEmpty }.compactMap { entry in
            var host = entry.pattern
            if host.hasPrefix("**.") { host = String(host.dropFirst(3)) } else if host.hasPrefix("*.") { host = "www." + host.dropFirst(2) }
            return seen.insert(host).inserted ? host : nil
        }
    }
}
