import CertAuthority

/// How the proxy presents itself to a client asking for a host.
public enum Presentation: Sendable {
    /// Terminate TLS with this leaf; `persona` goes into the flow.
    case intercept(Leaf, persona: String)
    /// Tunnel without decryption, for this reason; `persona` goes into the flow when one chose it.
    case passthrough(reason: String, persona: String? = nil)
}

/// Decides, per host, which certificate the client sees (or that it sees none of ours).
/// The team's leaf cache is the default; QA personas plug in here.
public protocol LeafSource: Sendable {
    /// - Throws: `CAError` when no leaf can be had (the flow records it, the client gets none).
    func presentation(for host: LeafName) throws -> Presentation
}

extension LeafCache: LeafSource {
    /// The team leaf; hosts outside the intermediate's name constraints pass through, since a
    /// leaf for them would fail verification on every client.
    public func presentation(for host: LeafName) throws -> Presentation {
        do {
            return .intercept(try leaf(for: host), persona: "team")
        } catch let error as CAError where error.code == .nameNotPermitted {
            return .passthrough(reason: "outside the intermediate's name constraints (\(issuer.signer.permittedDNS.joined(separator: ", ")))")
        }
    }
}
