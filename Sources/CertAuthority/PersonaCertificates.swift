import Foundation
import Synchronization

/// Leaves for each TLS persona, minted once per (persona, host) and cached; thread-safe.
///
/// `team` leaves come from the engine's `LeafCache`. The others:
/// - `unpinned`: signed by the QA alternate root (`devproxy qa init`), sent without a chain;
/// - `untrusted`: signed by a CA generated in memory when this object is built, never saved;
/// - `expired`: signed by the team signer, validity ended in the past (yesterday when the signer
///   is old enough, else one second after the signer's not-before);
/// - `wrong-host`: signed by the team signer for `wrong-host.invalid` (or `wrong-host.<permitted
///   domain>` when the intermediate is name-constrained, so the failure is the name, not the
///   constraint);
/// - `self-signed`: a leaf for the host signed with its own key;
/// - `tls12`: the team leaf (the listener offers at most TLS 1.2 for it);
/// - `no-forward-secrecy`: a team-signed RSA-2048 leaf (the listener offers RSA key exchange only);
/// - `passthrough`: no leaf (`nil`): the engine tunnels.
public final class PersonaCertificates: Sendable {
    /// The name every `wrong-host` leaf carries.
    public static let wrongHostName = "wrong-host.invalid"

    public let team: LeafCache
    /// The QA alternate root, when it exists; `unpinned` fails without it.
    public let alternateRoot: Signer?
    /// The in-memory CA behind `untrusted`.
    public let throwawayCA: Signer
    public let keyType: KeyType
    /// Cached leaves per persona and host. Default capacity: `LeafCache.defaultCapacity`.
    public let capacity: Int

    private struct Key: Hashable {
        let persona: Persona
        let host: String
    }

    private let cache: Mutex<[Key: Leaf]>

    /// - Parameters:
    ///   - team: the engine's leaf cache (its issuer's signer also signs `expired`/`wrong-host`).
    ///   - alternateRoot: the QA alternate root signer, or nil when not created.
    ///   - keyType: key type of non-team leaves. Default P-256.
    /// - Throws: when the throwaway CA cannot be generated.
    public init(team: LeafCache, alternateRoot: Signer?, keyType: KeyType = .p256,
                capacity: Int = LeafCache.defaultCapacity, now: Date = Date()) throws {
        self.team = team
        self.alternateRoot = alternateRoot
        self.keyType = keyType
        self.capacity = max(1, capacity)
        let key = try PrivateKey.generate(.p256)
        let ca = try CertificateProfile.root(name: "DevProxy Untrusted Throwaway CA", unit: nil, notBefore: now.addingTimeInterval(-3600),
                                             notAfter: now.addingTimeInterval(30 * 86400))
            .sign(publicKey: key, issuer: nil, issuerKey: key)
        self.throwawayCA = try Signer(certificate: ca, key: key, root: ca)
        self.cache = Mutex([:])
    }

    /// Loads the alternate root from `store` when present (`unpinned` is unavailable otherwise).
    public convenience init(store: CAStore, team: LeafCache, keyType: KeyType = .p256) throws {
        let alternate = QAAlternateRoot(store: store)
        try self.init(team: team, alternateRoot: alternate.exists ? try alternate.signer() : nil, keyType: keyType)
    }

    /// The leaf to present for `host` under `persona`, or nil for `passthrough`.
    ///
    /// - Throws: `.caMissing` for `unpinned` without a QA alternate root, `.invalidInput` for a
    ///   bad host name, or what minting throws (e.g. `.nameNotPermitted` for `team`).
    public func leaf(for persona: Persona, host: String, now: Date = Date()) throws -> Leaf? {
        let name = try LeafName(host)
        switch persona {
        case .passthrough: return nil
        case .team, .tls12: return try team.leaf(for: name, now: now)
        default: break
        }
        let key = Key(persona: persona, host: persona == .wrongHost ? "" : name.text)
        if let cached = cache.withLock({ $0[key] }), cached.certificate.notAfter > now || persona == .expired {
            return cached
        }
        let leaf = try mint(persona, name, now: now)
        cache.withLock { cache in
            if cache.count >= capacity { cache.removeAll() }
            cache[key] = leaf
        }
        return leaf
    }

    private func mint(_ persona: Persona, _ name: LeafName, now: Date) throws -> Leaf {
        let teamSigner = team.issuer.signer
        switch persona {
        case .unpinned:
            guard let alternateRoot else {
                throw CAError(.caMissing, "the unpinned persona needs the QA alternate root; create it with `devproxy qa init`")
            }
            return try LeafIssuer(signer: alternateRoot, keyType: keyType).issue(for: [name], now: now)
        case .untrusted:
            return try LeafIssuer(signer: throwawayCA, keyType: keyType).issue(for: [name], now: now)
        case .wrongHost:
            var wrong = try LeafName(Self.wrongHostName)
            if !teamSigner.permits(wrong), let domain = teamSigner.permittedDNS.first {
                wrong = try LeafName("wrong-host." + (domain.hasPrefix(".") ? String(domain.dropFirst()) : domain))
            }
            return try LeafIssuer(signer: teamSigner, keyType: keyType).issue(for: [wrong], now: now)
        case .expired:
            let issuer = teamSigner.certificate
            let notAfter = min(max(now.addingTimeInterval(-86400), issuer.notBefore.addingTimeInterval(1)), now.addingTimeInterval(-1))
            let notBefore = max(notAfter.addingTimeInterval(-7 * 86400), issuer.notBefore)
            let key = try PrivateKey.generate(keyType)
            let certificate = try CertificateProfile.leaf(names: [name], notBefore: notBefore, notAfter: notAfter,
                                                          rsa: key.isRSA)
                .sign(publicKey: key, issuer: issuer, issuerKey: teamSigner.key)
            return Leaf(certificate: certificate, key: key, chain: teamSigner.chain, issuer: issuer)
        case .selfSigned:
            let key = try PrivateKey.generate(keyType)
            let certificate = try CertificateProfile.leaf(names: [name], notBefore: now.addingTimeInterval(-3600),
                                                          notAfter: now.addingTimeInterval(30 * 86400), rsa: key.isRSA)
                .sign(publicKey: key, issuer: nil, issuerKey: key)
            return Leaf(certificate: certificate, key: key, chain: [], issuer: certificate)
        case .noForwardSecrecy:
            // RSA key exchange needs an RSA key in the certificate.
            return try LeafIssuer(signer: teamSigner, keyType: .rsa2048).issue(for: [name], now: now)
        case .team, .passthrough, .tls12:
            preconditionFailure("handled by leaf(for:host:)")
        }
    }
}
