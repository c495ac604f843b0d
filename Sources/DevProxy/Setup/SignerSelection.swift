import CertAuthority
import Foundation

/// Picks the CA that mints leaves for `devproxy run`, creating a local development CA on a
/// fresh machine so `swift run devproxy` works with no setup.
public struct SignerSelection: Sendable {
    /// What was chosen, and what to tell the user.
    public struct Result {
        public let signer: Signer
        /// Human lines: what was created or chosen, where, until when.
        public let notes: [String]
        public let warnings: [String]
        /// True when this run created the CA directory's root.
        public let createdCA: Bool
    }

    /// Marks a CA directory created by `devproxy run` for one developer (not a team CA): its
    /// intermediates are renewed automatically when they expire.
    public static let localMarker = ".local-development-ca"

    public let store: CAStore
    public let email: String
    public let bundlePath: String?
    public let signWithRoot: Bool
    public let passphrase: String?

    public init(store: CAStore, email: String, bundlePath: String?, signWithRoot: Bool, passphrase: String?) {
        self.store = store
        self.email = email
        self.bundlePath = bundlePath
        self.signWithRoot = signWithRoot
        self.passphrase = passphrase
    }

    /// - Throws: `CAError` with the command that fixes it (expired or revoked intermediate, no
    ///   intermediate for this identity in a team CA, unreadable bundle).
    public func select(now: Date = Date()) throws -> Result {
        var notes: [String] = []
        if let bundlePath {
            let bytes = try SecureFile.read(bundlePath, what: "the intermediate bundle")
            let signer: Signer
            do {
                signer = try Signer(bundle: bytes, passphrase: passphrase)
            } catch let error as CAError {
                // A certificate alone (the team root, an origin's certificate) read as "no PEM
                // private key found", a key alone as "no certificate found in the PEM data": neither
                // said what to give instead.
                let labels = PEMBlock.all(in: String(decoding: bytes, as: UTF8.self)).map(\.label)
                let missing = [labels.contains { $0.hasSuffix("PRIVATE KEY") } ? nil : "private key",
                               labels.contains("CERTIFICATE") ? nil : "certificate"].compactMap { $0 }
                guard missing.isEmpty else {
                    throw CAError(error.code, "--intermediate \(bundlePath): it holds no \(missing.joined(separator: " and no ")); "
                                  + "give the bundle `devproxy ca issue --out FILE` wrote (its key, the intermediate "
                                  + "and the root), as your security lead handed it over")
                }
                throw CAError(error.code, "--intermediate \(bundlePath): \(error.reason)")
            }
            try refuseIfRevoked(signer.certificate)
            try signer.checkValidity(at: now)
            notes.append("signing leaves with \(describe(signer.certificate)) from \(bundlePath)")
            notes += constraintNotes(signer)
            var warnings = expiryWarnings(signer.certificate, now: now)
            if let loose = SecureFile.looseKeyWarning(bundlePath, what: "the intermediate bundle (it holds the key)") {
                warnings.append(loose)
            }
            // What `ca issue` writes is key, intermediate and root: anything else is said.
            if signer.certificate.isSelfSigned {
                warnings.append("\(bundlePath) holds a self-signed CA (a root), not an intermediate from `devproxy ca issue`: "
                                + "leaves are signed by that root itself, and no ledger traces them to an engineer")
            } else if signer.root == nil {
                warnings.append("\(bundlePath) holds no root certificate: DevProxy cannot say which root clients must trust "
                                + "(a bundle from `devproxy ca issue` ends with it)")
            } else if let root = signer.root, !signer.certificate.isIssued(by: root),
                      !signer.chain.dropFirst().contains(where: { signer.certificate.isIssued(by: $0) && $0.isIssued(by: root) }) {
                // The banner, the onboarding page and `ca export` hand out the bundle's root: one
                // that did not sign the intermediate makes every client refuse every leaf.
                throw CAError(.keyMismatch, "--intermediate \(bundlePath): its root (\(root.subject)) did not sign its "
                              + "intermediate (issued by \(signer.certificate.issuer)); clients trusting that root would refuse "
                              + "every leaf: use the bundle `devproxy ca issue` wrote, which ends with its own root")
            }
            return Result(signer: signer, notes: notes, warnings: warnings, createdCA: false)
        }
        var created = false
        if !store.exists {
            try store.initialize(name: "DevProxy Development Root", unit: "local CA of \(email)", keyType: .p256, days: 3650, passphrase: nil, now: now)
            try SecureFile.write([], to: store.directory + "/" + Self.localMarker, mode: SecureFile.privateMode)
            created = true
            notes.append("created a local development CA in \(store.directory)")
        }
        if signWithRoot {
            let signer = try store.rootSigner(passphrase: passphrase)
            notes.append("signing leaves with the root itself (team-shared signing)")
            return Result(signer: signer, notes: notes, warnings: [], createdCA: created)
        }
        let entries = try store.intermediates(now: now).entries.filter { $0.email.lowercased() == email.lowercased() }
        // The newest active one whose bundle is here (the one the lead issued last: a narrower
        // replacement wins over an older one that runs longer), else the next newest.
        let isLocal = Self.isLocal(store)
        for active in entries.filter({ $0.status == .active }).sorted(by: { $0.notBefore > $1.notBefore }) {
            // A local CA's intermediate within a day of its end is replaced now (below), not
            // used with a warning that named the security lead's command.
            if isLocal, active.notAfter.timeIntervalSince(now) < LeafCache.renewSignerBefore { continue }
            guard let signer = try? loadBundle(active) else { continue }
            notes.append("signing leaves with \(describe(signer.certificate))")
            notes += constraintNotes(signer)
            return Result(signer: signer, notes: notes, warnings: expiryWarnings(signer.certificate, now: now), createdCA: created)
        }
        guard isLocal else {
            if let latest = entries.last, latest.status != .active {
                throw CAError(latest.status == .revoked ? .signerRevoked : .signerExpired,
                              "your intermediate \(latest.serial) is \(latest.status.rawValue); ask your security lead for a new one: \(issueCommand(email))")
            }
            throw CAError(.notFound, "no intermediate for \(email) in \(store.directory); get one with `\(issueCommand(email))` (or pass --intermediate BUNDLE)")
        }
        let signer = try Self.issueLocalIntermediate(store: store, email: email, passphrase: passphrase, now: now)
        let certificate = signer.certificate
        notes.append("issued an intermediate for \(email) (serial \(certificate.serialHex), valid until \(ISO8601.string(certificate.notAfter)))")
        return Result(signer: signer, notes: notes, warnings: [], createdCA: created)
    }

    /// A new 30-day intermediate for `email` from the local development CA `store`, as the signer
    /// its bundle makes: at start (`select`) and while running (`LeafCache`'s renewal).
    public static func issueLocalIntermediate(store: CAStore, email: String, passphrase: String?, now: Date) throws -> Signer {
        let (_, path) = try store.issueIntermediate(email: email, days: 30, permittedDNS: [], keyType: .p256,
                                                    output: nil, passphrase: passphrase, now: now)
        return try Signer(bundle: try SecureFile.read(path, what: "the intermediate bundle"))
    }

    /// Whether `store` is a local development CA `run` made itself (it may issue its own intermediates).
    public static func isLocal(_ store: CAStore) -> Bool {
        FileManager.default.fileExists(atPath: store.directory + "/" + localMarker)
    }

    private func loadBundle(_ entry: IntermediateEntry) throws -> Signer {
        let standard = store.intermediatesDirectory + "/\(entry.email)-\(entry.serial).pem"
        var path = entry.record.bundle ?? standard
        // A ledger written before bundle paths were absolute holds them relative to where `ca
        // issue` ran: the CA directory's own copy then.
        if !path.hasPrefix("/"), !FileManager.default.fileExists(atPath: path) { path = standard }
        return try Signer(bundle: try SecureFile.read(path, what: "the intermediate bundle"), passphrase: passphrase)
    }

    /// A bundle handed over by a security lead may have been revoked since; the ledger says so
    /// when this machine has it.
    private func refuseIfRevoked(_ certificate: Certificate) throws {
        guard store.exists, let entries = try? store.intermediates().entries,
              let entry = entries.first(where: { $0.serial == certificate.serialHex }), entry.status == .revoked else { return }
        throw CAError(.signerRevoked, "the intermediate \(entry.serial) was revoked; get a new one with `\(issueCommand(entry.email))`")
    }

    /// The command that issues `email` an intermediate from this CA: with its `--ca-dir`, which a
    /// hint without it sent to another CA (`./ca`, or the local development CA).
    func issueCommand(_ email: String) -> String {
        "devproxy ca issue --ca-dir \(store.directory) --email \(email)"
    }

    /// What a name-constrained intermediate leaves undecrypted, said before the first flow
    /// passes through: the banner's curl example names a host it may sign.
    private func constraintNotes(_ signer: Signer) -> [String] {
        guard !signer.permittedDNS.isEmpty else { return [] }
        return ["it may sign \(signer.permittedDNS.joined(separator: ", ")) (and their subdomains); other hosts and IP "
                + "addresses pass through undecrypted"]
    }

    private func describe(_ certificate: Certificate) -> String {
        "the intermediate of \(certificate.email ?? "?") (serial \(certificate.serialHex), valid until \(ISO8601.string(certificate.notAfter)))"
    }

    private func expiryWarnings(_ certificate: Certificate, now: Date) -> [String] {
        let left = certificate.notAfter.timeIntervalSince(now)
        guard left < 24 * 3600 else { return [] }
        let email = certificate.email ?? email
        // Where the next one goes: `run` takes it there without a restart (SignerWatch). A bundle
        // came from the security lead's CA directory, not this machine's: its command names none.
        let next = bundlePath.map { "get a new one with `devproxy ca issue --email \(email)` and put it at \($0)" }
            ?? "get a new one with `\(issueCommand(email))`"
        return ["your intermediate expires in \(Int(left / 3600)) h \(Int(left.truncatingRemainder(dividingBy: 3600) / 60)) min; "
                + next + ": a running devproxy takes it without a restart"]
    }
}
