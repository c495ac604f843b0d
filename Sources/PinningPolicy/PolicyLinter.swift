import CertAuthority
import Foundation

/// One finding of `PolicyLinter`.
public struct PolicyLint: Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: String, Sendable {
        /// Only one pin: a key rotation or CA change bricks the app.
        case noBackupPin
        /// A pin matches the leaf's key, which changes with every certificate renewal.
        case pinsLeafKey
        /// The pins have expired; the library ignores them.
        case expired
        /// The pins expire within 30 days.
        case expiresSoon
        /// Every pinned entry is report-only (TrustKit `TSKEnforcePinning NO`; TrustKit-Android's
        /// default, which relaxes only the connections through its socket factory).
        case reportOnlyEverywhere
        /// The team root is not among the host's pins, so DevProxy's re-signed chain fails.
        case teamRootNotPinned
        /// Custom pinner: a pin is another form's hash of a known certificate; it matches nothing.
        case wrongHashForm
        /// Custom pinner: a leaf-only pinner holds a CA's pin, which no chain can satisfy.
        case caPinInLeafPinner
        /// Custom pinner: leaf-only, so DevProxy's leaves need `devproxy run --leaf-key`.
        case leafOnlyPinner
        /// Custom pinner: pins whole certificates, which change at every renewal.
        case pinsCertificate
        /// A root rotation is under way and the pins hold the retiring root but not its successor.
        case pinsOnlyRetiringRoot
    }

    public let kind: Kind
    /// The entry concerned, or nil for the whole policy.
    public let domain: String?
    public let message: String

    public var description: String { domain.map { "\($0): \(message)" } ?? message }
}

/// Advice on a policy that its library accepts but that will hurt someone.
public struct PolicyLinter: Sendable {
    /// Pins of the team root that DevProxy's leaves chain to; empty skips that check.
    public var teamRootPins: [Pin]
    /// Served chains per pattern (leaf first), to recognise pins of leaf keys.
    public var chains: [String: [Certificate]]
    /// How far ahead "expires soon" looks. Default: 30 days.
    public var expiryWarning: TimeInterval
    /// The team root itself, for a custom pinner's own hash form; nil skips those checks.
    public var teamRoot: Certificate?
    /// Certificates the pins are meant to match (production's, `policy check --expected`), for
    /// the wrong-hash-form and CA-in-a-leaf-pinner checks. Default none.
    public var expected: [Certificate] = []
    /// A team root rotation under way, for the retiring-root check; nil skips it.
    public var rotation: Rotation? = nil

    /// A linter with the defaults stated on each property unless overridden.
    public init(teamRootPins: [Pin] = [], chains: [String: [Certificate]] = [:], expiryWarning: TimeInterval = 30 * 86_400) {
        self.teamRootPins = teamRootPins
        self.chains = chains
        self.expiryWarning = expiryWarning
    }

    /// Every finding for `policy` at `date`, entry by entry in policy order.
    public func lint(_ policy: PinningPolicy, at date: Date = Date()) -> [PolicyLint] {
        var findings: [PolicyLint] = []
        let pinned = policy.domains.filter { !$0.excludedFromParent && !$0.pins.isEmpty }
        for entry in pinned {
            let name = entry.pattern
            let pins = effectivePins(of: entry, in: policy)
            if Set(pins).count < 2 {
                findings.append(PolicyLint(kind: .noBackupPin, domain: name,
                                           message: "only one pin; add a backup pin of a key you hold offline"))
            }
            if policy.customPinner == nil, let leaf = chains[name]?.first {
                let spki = leaf.spkiDER
                let leafDigests = [Digest.sha256(spki), Digest.sha1(spki)] + [TrustKitKeyHash.hash(of: leaf)].compactMap { $0 }
                if entry.pins.contains(where: { leafDigests.contains($0.digest) }) {
                    findings.append(PolicyLint(kind: .pinsLeafKey, domain: name, message: "a pin matches the leaf "
                                               + "key, which changes at renewal; pin an intermediate or root instead"))
                }
            }
            if let expiration = entry.expiration {
                if entry.isExpired(at: date) {
                    findings.append(PolicyLint(kind: .expired, domain: name,
                                               message: "pins expired \(expiration); the app no longer pins this host"))
                } else if expiration.timeIntervalSince(date) < expiryWarning {
                    findings.append(PolicyLint(kind: .expiresSoon, domain: name,
                                               message: "pins expire \(expiration), within 30 days"))
                }
            }
            // Only where the pins are enforced: an expired pin-set and a report-only entry block
            // nothing, and neither does an Android entry whose user-installed anchors (where the
            // team root is) override pins, as the prediction says.
            let userOverridesPins = policy.source == .androidNSC
                && entry.trustAnchors.contains { $0.store == .user && $0.overridesPins }
            if policy.customPinner == nil, policy.ats == nil, !teamRootPins.isEmpty, entry.enforce, !entry.isExpired(at: date),
               !userOverridesPins, !pins.contains(where: teamRootPins.contains) {
                findings.append(PolicyLint(kind: .teamRootNotPinned, domain: name,
                                           message: "DevProxy cannot decrypt this host; the app will block"))
            }
        }
        if let pinner = policy.customPinner { findings += lint(pinner) }
        if let ats = policy.ats { findings += lint(ats) }
        findings += lintRotation(policy)
        if !pinned.isEmpty, pinned.allSatisfy({ !$0.enforce }) {
            // TrustKit-Android relaxes only the connections given its SSLSocketFactory or trust
            // manager (`PinnedDomain.trustKitAndroidReportOnlyReach`).
            let message = pinned.contains(where: \.trustKitAndroid)
                ? "every entry is " + PinnedDomain.trustKitAndroidReportOnlyReach
                : "every entry is report-only; nothing is blocked"
            findings.append(PolicyLint(kind: .reportOnlyEverywhere, domain: nil, message: message))
        }
        return findings
    }

    /// The pins that apply to the hosts of `entry`: its own, except for OkHttp, which pools the
    /// pins of every pattern matching a host (`**.acme.dev` also pins `cdn.acme.dev`).
    private func effectivePins(of entry: PinnedDomain, in policy: PinningPolicy) -> [Pin] {
        guard policy.source == .okHttp else { return entry.pins }
        var host = entry.pattern
        if host.hasPrefix("**.") { host = String(host.dropFirst(3)) } else if host.hasPrefix("*.") { host = "www." + host.dropFirst(2) }
        let pooled = policy.entries(for: host).flatMap(\.pins)
        return pooled.isEmpty ? entry.pins : pooled
    }
}
