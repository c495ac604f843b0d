import CertAuthority
import DevProxy
import Foundation
import PinningPolicy

/// `devproxy policy check POLICY`: validate and lint a pinning policy, and predict what the app
/// decides for the chain DevProxy would present.
enum PolicyCommand {
    static let usage = """
    Check a pinning policy as TrustKit, Android NSC or OkHttp would read it, and predict what the
    app decides when DevProxy intercepts it.

      devproxy policy check Info.plist                         TrustKit (Info.plist, plist or JSON)
      devproxy policy check network_security_config.xml        Android Network Security Config
      devproxy policy check pins.txt --host api.acme.dev       OkHttp (pattern pin… lines, or Kotlin source)
      devproxy policy check pinner.json --expected prod.pem   a hand-written pinner ("kind": "custom"), its pins
                                                               judged against production's certificates
      devproxy policy check Info.plist --kind ats              App Transport Security (found alone without --kind)
      devproxy policy check Info.plist --persona tls12         ATS: would the app refuse DevProxy offering at most TLS 1.2?
      devproxy policy check Info.plist --chain served.pem      predict for a chain you captured instead
      devproxy policy check nsc.xml --res app/src/main/res     read <certificates src="@raw/…"/> from res/raw (or
                                                               --res app.apk; a policy in res/xml/ finds it alone);
                                                               unread, a verdict that turns on it is `uncertain`
      devproxy policy check pins.txt --leaf-key debug-leaf.pub  ... for DevProxy's leaf carrying this key (a PEM public
                                                               key or certificate), as `devproxy run --leaf-key` serves it
      devproxy policy check Info.plist --json                  {"errors", "warnings", "hosts": [...]}

    The presented chain is a leaf minted now from your newest active intermediate in the ledger
    of --ca-dir DIR (else the root, whose passphrase comes from --passphrase-file FILE or
    $DEVPROXY_CA_PASSPHRASE), verified against the team root; with --leaf-key FILE that leaf
    certifies FILE's key (a public key, certificate, private key or CSR) instead of a fresh one.
    ATS hosts also get a TLS verdict (meets, refuses, uncertain) for what DevProxy offers, or the
    persona given with --persona (tls12, no-forward-secrecy).
    Exit codes: 0 the library accepts the policy (warnings may remain), 1 it would refuse it
    (the app crashes at start-up) or a custom/ATS file is unreadable, 2 usage.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        guard let sub = raw.first, sub != "--help", sub != "-h" else {
            return Output.usage(usage, missing: raw.isEmpty)
        }
        guard sub == "check" else { throw UsageError("unknown command `policy \(sub)`; see `devproxy policy --help`") }
        let arguments = try Arguments(raw.dropFirst(), valued: ["host", "chain", "ca-dir", "passphrase-file", "persona", "kind",
                                                                  "expected", "leaf-key", "res"],
                                      booleans: ["json"])
        var offer = TLSOffer.devProxy
        if let persona = arguments.value("persona") {
            guard let personaOffer = TLSOffer.persona(persona) else {
                throw UsageError("--persona \(persona) is not one of tls12, no-forward-secrecy (the personas that change TLS)")
            }
            offer = personaOffer
        }
        let kind = try arguments.value("kind").map { name in
            guard let kind = Self.kinds[name] else { throw UsageError("--kind \(name) is not one of \(Self.kinds.keys.sorted().joined(separator: ", "))") }
            return kind
        }
        guard arguments.positionals.count == 1, let path = arguments.positionals.first else {
            throw UsageError("give one POLICY file; see `devproxy policy --help`")
        }
        let data: Data
        do {
            data = Data(try SecureFile.contents(of: path))
        } catch {
            throw CommandFailure("cannot read \(path): \(error.reason)")
        }
        // An empty file would read as an OkHttp pinner with no pins, which OkHttp accepts: "valid"
        // said of the wrong or a truncated file.
        guard data.contains(where: { !($0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09) }) else {
            throw CommandFailure("\(path) is empty: give the Info.plist, network_security_config.xml, OkHttp pins or "
                                 + "pinner JSON to check")
        }
        if kind == nil, let reason = PolicyLoader.notAPolicy(data) { throw CommandFailure("\(path): \(reason)") }
        let leafKey = try leafKeySource(arguments)
        let store = CACommand.store(arguments)
        var notes: [String] = []
        let teamRoot = store.exists ? try store.rootCertificate() : nil
        var presented: PolicyCheck.PresentedChain?
        var presentedBy = arguments.value("chain").map { "chain \($0)" } ?? ""
        if let chainPath = arguments.value("chain") {
            let chain: [Certificate]
            do {
                chain = try Certificate.all(from: try SecureFile.read(chainPath, what: "the chain"))
            } catch let error as CAError {
                throw CommandFailure("\(chainPath): \(error.reason)")
            }
            presented = .served(chain, anchors: teamRoot.map { [$0] } ?? [])
        } else if let teamRoot {
            do {
                let signer = try currentSigner(store, arguments: arguments)
                presented = .minted(issuer: LeafIssuer(signer: signer), teamRoot: teamRoot)
                presentedBy = "a leaf minted now by " + (signer.certificate.email.map { "\($0)'s intermediate" } ?? "the team root")
                if let (path, source) = leafKey {
                    let authorities = [teamRoot, signer.certificate] + signer.chain
                    if let authority = authorities.first(where: { $0.spkiDER == source.spkiDER }) {
                        throw CommandFailure("--leaf-key \(path) is the key of \(authority.subject), a CA; a leaf never carries "
                                             + "a CA's key (devproxy run refuses it too): give the leaf's own key")
                    }
                    presentedBy += " with the key in \(path)"
                }
            } catch let error as CAError {
                notes.append("cannot mint a leaf from \(store.directory): \(error.reason)")
            }
        } else {
            notes.append("no CA in \(store.directory): the team-root lint is skipped (give --ca-dir DIR)")
        }
        if let (path, _) = leafKey, presented == nil {
            throw CommandFailure("--leaf-key needs a CA to mint the leaf with, and \(store.directory) has "
                                 + (teamRoot == nil ? "none" : "no signer (\(notes.last ?? ""))") + ": give --ca-dir DIR")
        }
        var check = PolicyCheck(teamRoot: teamRoot, presented: presented)
        check.leafKey = leafKey?.source.spkiDER
        check.androidResources = try AndroidResourcesOption.resolve(arguments.value("res"), policyPath: path, policy: data, kind: kind)
        (check.offer, check.kind) = (offer, kind)
        check.rotation = rotation(of: store, root: teamRoot)
        for file in arguments.values("expected") {
            do {
                check.expected += try Certificate.all(from: try SecureFile.read(file, what: "the expected certificate"))
            } catch let error as CAError {
                throw CommandFailure("\(file): \(error.reason)")
            }
        }
        var report = check.run(policy: data, hosts: arguments.values("host"))
        report.warnings = notes + report.warnings
        let valid = report.errors.isEmpty
        // No library stands behind a custom pinner file: a bad one is bad input, not a refusal.
        if report.source == .custom || report.source == .ats, let error = report.errors.first {
            throw CommandFailure("\(path): \(error)")
        }
        if arguments.flag("json") {
            Output.json(JSONReport(errors: report.errors, warnings: report.warnings, hosts: report.hosts))
            return valid ? 0 : 1
        }
        let kindName = report.source.map(describe) ?? "policy"
        for error in report.errors { Output.line("error   \(error)") }
        if !valid {
            Output.line()
            Output.line("\(path): the \(kindName) library refuses this policy; the app fails at start-up. Fix the error above.")
            return 1
        }
        for warning in report.warnings { Output.line("warning \(warning)") }
        if !report.warnings.isEmpty { Output.line() }
        Output.line("\(path): a valid \(kindName) policy.")
        if !report.hosts.isEmpty {
            Output.line()
            Output.line("Through DevProxy (\(presentedBy)):")
            for host in report.hosts {
                let result = host.result.map { " (result \($0))" } ?? ""
                let name = host.decision.replacingOccurrences(of: "_", with: " ")
                Output.line("  \(host.host.padding(toLength: max(24, host.host.count), withPad: " ", startingAt: 0))  "
                            + "\(name)\(result): \(host.reason)")
                if let transport = host.transport, transport == .uncertain || (transport == .refuses && !host.reason.hasPrefix("ATS: ")) {
                    for reason in host.transportReasons ?? [] { Output.line("  \(String(repeating: " ", count: 24))  ATS: \(reason)") }
                }
            }
        }
        return 0
    }

    /// `--leaf-key FILE` read: its path and the first key in it; nil when not given.
    private static func leafKeySource(_ arguments: Arguments) throws -> (path: String, source: PinSource)? {
        let given = arguments.values("leaf-key")
        guard let path = given.first else { return nil }
        guard given.count == 1 else { throw UsageError("--leaf-key was given \(given.count) times; a chain has one leaf: give one") }
        guard arguments.value("chain") == nil else {
            throw UsageError("--leaf-key and --chain both say what the leaf is: give --chain for a captured chain, or "
                             + "--leaf-key for the key DevProxy's minted leaf carries")
        }
        do {
            guard let source = try PinSource.all(in: try SecureFile.read(path, what: "the leaf key")).first else {
                throw CommandFailure("\(path): no public key in it; give a PEM public key or certificate")
            }
            return (path, source)
        } catch let error as CAError {
            throw CommandFailure("\(path): \(error.reason)")
        }
    }

    /// The JSON shape: exactly errors, warnings, hosts.
    struct JSONReport: Encodable {
        let errors: [String]
        let warnings: [String]
        let hosts: [PolicyCheck.HostPrediction]
    }

    /// `--kind` names.
    static let kinds: [String: PolicySource] = ["trustkit": .trustKit, "nsc": .androidNSC, "okhttp": .okHttp, "custom": .custom,
                                                "ats": .ats]

    static func describe(_ source: PolicySource) -> String {
        switch source {
        case .trustKit: return "TrustKit"
        case .androidNSC: return "Android Network Security Config"
        case .okHttp: return "OkHttp CertificatePinner"
        case .custom: return "hand-written pinner (kind custom)"
        case .ats: return "App Transport Security"
        }
    }

    /// The signer DevProxy mints with: the newest active intermediate whose bundle is on this
    /// machine, else the root (its passphrase from --passphrase-file or the environment).
    /// The rotation under way in `store`: after `ca rotate`, the previous root → the current one;
    /// with a key from `ca init --next` waiting, the current root → that key.
    static func rotation(of store: CAStore, root: Certificate?) -> PolicyLinter.Rotation? {
        guard let root else { return nil }
        if let retiring = try? store.retiringRoots(), !retiring.isEmpty {
            return PolicyLinter.Rotation(retiring: retiring.map(\.spkiDER), successor: root.spkiDER,
                                         successorIsNextKey: false)
        }
        guard let next = try? store.nextRootPublicKey() else { return nil }
        return PolicyLinter.Rotation(retiring: [root.spkiDER], successor: next.spkiDER, successorIsNextKey: true)
    }

    static func currentSigner(_ store: CAStore, arguments: Arguments) throws -> Signer {
        let entries = (try? store.intermediates().entries) ?? []
        let active = entries.filter { $0.status == .active }.sorted { $0.notBefore > $1.notBefore }
        for entry in active {
            guard let path = entry.record.bundle, let bytes = try? SecureFile.read(path, what: "bundle"),
                  let signer = try? Signer(bundle: bytes) else { continue }
            return signer
        }
        return try store.rootSigner(passphrase: try CACommand.passphrase(arguments))
    }
}
