/// A TLS persona: which certificate DevProxy presents to a client for a host, so QA can see
/// whether the app enforces pinning, only reports, or does not pin at all.
public enum Persona: String, Sendable, CaseIterable, Codable {
    /// A leaf from the engineer's intermediate (the normal, decryptable case).
    case team
    /// A leaf from the QA alternate root: trusted by the device, but not the pinned team root.
    case unpinned
    /// A leaf from a throwaway CA generated in memory: trusted by nobody.
    case untrusted
    /// A team-signed leaf whose validity ended in the past.
    case expired
    /// A team-signed leaf for `wrong-host.invalid`, whatever host was asked for.
    case wrongHost = "wrong-host"
    /// A self-signed leaf for the host.
    case selfSigned = "self-signed"
    /// No interception: the engine tunnels the bytes.
    case passthrough
    /// The team leaf, but DevProxy offers at most TLS 1.2: an app whose ATS requires
    /// `NSExceptionMinimumTLSVersion` TLSv1.3 refuses it.
    case tls12
    /// A team-signed RSA leaf over TLS 1.2 with RSA key exchange only (no ECDHE): ATS's default
    /// `NSExceptionRequiresForwardSecrecy` refuses it.
    case noForwardSecrecy = "no-forward-secrecy"

    /// Whether the persona changes the TLS settings rather than the certificate.
    public var changesTLS: Bool { self == .tls12 || self == .noForwardSecrecy }

    /// The accepted names, for help and error text.
    public static var choices: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// What a pinned client is expected to do with this persona's certificate, for humans.
    public var expectation: String {
        switch self {
        case .team: return "chains to the team root: the app should connect (debuggable)"
        case .unpinned: return "trusted root, not pinned: a pinning app blocks or reports"
        case .untrusted: return "unknown CA: every app should reject it"
        case .expired: return "expired leaf: every app should reject it"
        case .wrongHost: return "name mismatch: every app should reject it"
        case .selfSigned: return "self-signed leaf: every app should reject it"
        case .passthrough: return "not intercepted"
        case .tls12: return "TLS 1.2 at most: an app requiring TLS 1.3 (ATS) refuses it"
        case .noForwardSecrecy: return "RSA key exchange, no forward secrecy: ATS refuses it unless the domain opts out"
        }
    }
}
