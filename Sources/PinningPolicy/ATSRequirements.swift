import Foundation

/// What the TLS server in front of the app offers: DevProxy's normal listener, or a QA persona
/// that offers less so QA can see whether the app's ATS settings refuse it.
public struct TLSOffer: Sendable, Equatable {
    /// For messages: "DevProxy", "the tls12 persona".
    public var name: String
    /// The highest version offered.
    public var maxVersion: ATSTLSVersion
    /// Whether only ECDHE (or TLS 1.3) key exchange is offered.
    public var forwardSecrecy: Bool
    /// Whether the leaf comes with Signed Certificate Timestamps (DevProxy's never do).
    public var signedCertificateTimestamps: Bool
    /// Whether the leaf chains to a root the user (or MDM) installed, as DevProxy's team root is.
    public var anchorInstalledByUser: Bool

    /// DevProxy's listener: TLS 1.2–1.3 with ECDHE, minted leaves without SCTs, the team root.
    public static let devProxy = TLSOffer(name: "DevProxy", maxVersion: .tls13, forwardSecrecy: true,
                                          signedCertificateTimestamps: false, anchorInstalledByUser: true)

    /// The offer of a QA persona that changes TLS settings (`tls12`, `no-forward-secrecy`), else nil.
    public static func persona(_ name: String) -> TLSOffer? {
        switch name {
        case "tls12":
            return TLSOffer(name: "the tls12 persona", maxVersion: .tls12, forwardSecrecy: true,
                            signedCertificateTimestamps: false, anchorInstalledByUser: true)
        case "no-forward-secrecy":
            return TLSOffer(name: "the no-forward-secrecy persona", maxVersion: .tls12, forwardSecrecy: false,
                            signedCertificateTimestamps: false, anchorInstalledByUser: true)
        default:
            return nil
        }
    }
}

/// Whether the connection `TLSOffer` describes meets a host's ATS requirements, and why not.
public struct ATSTransportPrediction: Sendable, Equatable {
    public enum Verdict: String, Sendable, Codable {
        /// ATS accepts the connection.
        case meets
        /// ATS refuses it; `reasons` say which requirement fails.
        case refuses
        /// Apple does not document the outcome; `reasons` say what is unknown.
        case uncertain
    }

    public var verdict: Verdict
    /// The `NSExceptionDomains` entry that applies, or nil for ATS's defaults.
    public var exceptionDomain: String?
    public var reasons: [String]
}

extension ATSPolicy {
    /// The TLS requirements for `host` checked against `offer`.
    public func transport(for host: String, offer: TLSOffer = .devProxy) -> ATSTransportPrediction {
        let exception = exceptionDomain(for: host)
        var prediction = ATSTransportPrediction(verdict: .meets, exceptionDomain: exception?.name, reasons: [])
        if exception == nil, arbitraryLoadsInEffect {
            prediction.reasons.append("NSAllowsArbitraryLoads: ATS does not constrain \(host)")
            return prediction
        }
        let minimum = exception?.minimumTLSVersion ?? .tls12
        let where_ = exception.map { "NSExceptionDomains \($0.name)" } ?? "ATS default"
        if offer.maxVersion < minimum {
            prediction.verdict = .refuses
            prediction.reasons.append("\(where_) requires \(minimum.rawValue) or later (NSExceptionMinimumTLSVersion); "
                                      + "\(offer.name) offers at most \(offer.maxVersion.rawValue)")
        }
        if exception?.requiresForwardSecrecy ?? true, !offer.forwardSecrecy {
            prediction.verdict = .refuses
            prediction.reasons.append("\(where_) requires forward secrecy (NSExceptionRequiresForwardSecrecy, default YES); "
                                      + "\(offer.name) offers RSA key exchange only")
        }
        if exception?.requiresCertificateTransparency == true, !offer.signedCertificateTimestamps {
            if offer.anchorInstalledByUser {
                if prediction.verdict == .meets { prediction.verdict = .uncertain }
                prediction.reasons.append("\(where_) sets NSRequiresCertificateTransparency and \(offer.name)'s leaves carry "
                    + "no SCTs. Apple's Certificate Transparency policy (support.apple.com/103214) covers publicly trusted "
                    + "certificates, which a root you installed is not; Apple does not document whether the app's own "
                    + "NSRequiresCertificateTransparency is waived for such a root: uncertain, test on a device")
            } else {
                prediction.verdict = .refuses
                prediction.reasons.append("\(where_) sets NSRequiresCertificateTransparency; the leaf carries no SCTs")
            }
        }
        if prediction.reasons.isEmpty {
            prediction.reasons.append("\(where_): \(offer.name) meets \(minimum.rawValue) or later"
                                      + ((exception?.requiresForwardSecrecy ?? true) ? " with forward secrecy" : ""))
        }
        return prediction
    }

    /// Every domain name the policy mentions, pinned first, for `policy check` without --host.
    public var namedHosts: [String] {
        var seen: [String] = []
        for name in pinnedDomains.map(\.name) + exceptionDomains.map(\.name) where !seen.contains(name) { seen.append(name) }
        return seen
    }
}
