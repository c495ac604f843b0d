import CertAuthority
import Foundation
import PinningPolicy

/// `devproxy pins snippet`: ready-to-paste pinning configuration for the team root.
enum PinsSnippetCommand {
    static let usage = """
    Pinning configuration that pins the team root (plus a backup key), ready to paste.

      devproxy pins snippet --domain api.acme.dev --format trustkit --backup next-root.csr
      devproxy pins snippet --domain acme.dev --include-subdomains --format nsc --backup next-root.key
      devproxy pins snippet --domain api.acme.dev --format trustkit-plist --report-only \\
                            --report-uri https://reports.acme.dev/pins --expiration 2027-06-30
      devproxy pins snippet --domain api.acme.dev --format okhttp
      devproxy pins snippet --domain api.acme.dev --format custom --hash raw-key --backup next-root.csr
      devproxy pins snippet --domain api.acme.dev --format swift-pins --hash trustkit --leaf-key debug-leaf.key
      devproxy pins snippet --domain api.acme.dev --format ats --backup next-root.csr

    Formats: trustkit (Swift), trustkit-plist (Info.plist), nsc (Android XML), okhttp (Kotlin),
    custom (a `policy check` file for a hand-written pinner), swift-pins (its Set<String> of pins),
    ats (Info.plist NSPinnedDomains: CA identities, or leaf identities with --leaf-key).
    Hand-written pinners: --hash spki|raw-key|trustkit|certificate (default spki), --scope any|leaf|ca,
    --leaf-key KEY.pem pins the key `devproxy run --leaf-key HOST=KEY.pem` mints leaves with (scope leaf).
    The root comes from --ca-dir DIR; --backup takes a CSR, public or private key, or certificate;
    without --backup, the next root key made by `devproxy ca init --next` is the backup pin.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" || raw.isEmpty {
            return Output.usage(usage, missing: raw.isEmpty)
        }
        let arguments = try Arguments(raw, valued: ["domain", "format", "report-uri", "expiration", "backup", "ca-dir",
                                                    "hash", "scope", "leaf-key"],
                                      booleans: ["include-subdomains", "report-only"])
        guard let domain = arguments.value("domain"), !domain.isEmpty else { throw UsageError("--domain DOMAIN is required") }
        // Every format's library matches names, never addresses or globs (which would be pinned as
        // text no host ever matches): a subdomain wildcard is --include-subdomains.
        guard case .dns(let name)? = try? LeafName(domain), !name.contains("*") else {
            throw UsageError("--domain \(domain) is not a host name; give one like api.example.com "
                             + "(--include-subdomains covers the names below it)")
        }
        guard let formatName = arguments.value("format") else { throw UsageError("--format \(PinSnippet.Format.choices) is required") }
        guard let format = PinSnippet.Format(rawValue: formatName) else {
            throw UsageError("--format \(formatName) is not one of \(PinSnippet.Format.choices)")
        }
        if let expiration = arguments.value("expiration") {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd"
            guard formatter.date(from: expiration) != nil else {
                throw UsageError("--expiration \(expiration) is not a yyyy-MM-dd date")
            }
        }
        let hash = try arguments.value("hash").map { name in
            guard let form = PinHashForm(rawValue: name) else { throw UsageError("--hash \(name) is not one of \(PinHashForm.choices)") }
            return form
        } ?? .spki
        let leafKey = arguments.value("leaf-key")
        var scope = try arguments.value("scope").map { name in
            guard let scope = CustomPinner.Scope(rawValue: name) else {
                throw UsageError("--scope \(name) is not one of \(CustomPinner.Scope.choices)")
            }
            return scope
        } ?? (leafKey == nil ? .any : .leaf)
        if !format.isHandWritten, hash != .spki {
            throw UsageError("--hash is for hand-written pinners (--format custom or swift-pins); \(format.rawValue) pins hash the SPKI")
        }
        if !format.pinsLeaves, arguments.value("scope") != nil || leafKey != nil {
            throw UsageError("--scope and --leaf-key are for --format custom, swift-pins or ats")
        }
        if leafKey != nil, scope == .ca { throw UsageError("--scope ca cannot hold a leaf key's pin") }
        if leafKey != nil, hash == .certificate {
            throw UsageError("--hash certificate cannot pin a --leaf-key: DevProxy mints a new certificate for the key")
        }
        var pins: [PinSnippet.PinLine]
        if let leafKey {
            let source = try pinSource(leafKey, what: "the leaf key")
            guard let digest = hash.digest(of: source) else { throw CommandFailure("\(leafKey): no \(hash.rawValue) form for this key") }
            pins = [PinSnippet.PinLine(base64: digest.base64, comment: "DevProxy --leaf-key \((leafKey as NSString).lastPathComponent) "
                                       + "(debug builds only)")]
        } else {
            let root = try CACommand.store(arguments).rootCertificate()
            if scope == .leaf { scope = .any }
            guard let digest = hash.digest(of: root) else { throw CommandFailure("the team root's key has no \(hash.rawValue) form") }
            pins = [PinSnippet.PinLine(base64: digest.base64, comment: "DevProxy team root: \(root.subject)")]
        }
        // Without --backup, the next root key `ca init --next` made is the backup pin.
        let store = CACommand.store(arguments)
        let wantsNextKey = arguments.value("backup") == nil && leafKey == nil && store.exists
        let nextKey = wantsNextKey && FileManager.default.fileExists(atPath: store.nextRootPublicKeyPath)
            ? store.nextRootPublicKeyPath : nil
        if let backup = arguments.value("backup") ?? nextKey {
            let source = try pinSource(backup, what: "the backup key")
            guard let digest = hash.digest(of: source) else { throw CommandFailure("\(backup): no \(hash.rawValue) form for it") }
            var what = source.subject.map { "backup: \($0)" } ?? "backup: \(source.keyDescription) \(source.kind.rawValue.replacingOccurrences(of: "_", with: " ")) in \((backup as NSString).lastPathComponent)"
            if backup == nextKey { what = "backup: the next team root key (devproxy ca init --next)" }
            pins.append(PinSnippet.PinLine(base64: digest.base64, comment: what))
            if pins[1].base64 == pins[0].base64 { Output.warning("the backup key is the pinned key itself; it backs up nothing") }
        }
        var snippet = PinSnippet(domain: domain, includeSubdomains: arguments.flag("include-subdomains"), pins: pins,
                                 reportURIs: arguments.values("report-uri"), reportOnly: arguments.flag("report-only"),
                                 expiration: arguments.value("expiration"))
        (snippet.hash, snippet.scope) = (hash, scope)
        // A configuration TrustKit refuses at start-up is not printed as one ready to paste (it
        // exited 0, and the app built from it crashed at launch).
        if format == .trustKit || format == .trustKitPlist, !snippet.reportOnly, Set(pins.map(\.base64)).count < 2 {
            throw CommandFailure("TrustKit refuses to start with fewer than two pins when enforcing: give a backup pin "
                                 + "with --backup FILE (a CSR, key or certificate of your next root; `devproxy ca init "
                                 + "--next` makes one), or --report-only")
        }
        if format == .trustKit || format == .trustKitPlist {
            // Checked the way TrustKit checks it at start-up (`policy check`'s parser): a name it
            // refuses (`localhost`, `co.uk` with subdomains, a name without a public suffix) was
            // printed as ready to paste, and the app built from it crashed at launch.
            do {
                _ = try TrustKitPolicyParser().parse(Data(snippet.render(.trustKitPlist).utf8))
            } catch let error as PolicyError {
                throw CommandFailure("TrustKit refuses this configuration at start-up, so the app would crash at launch: "
                                     + error.reason)
            }
        }
        for warning in snippet.warnings(for: format) { Output.warning(warning) }
        Output.raw(Array(snippet.render(format).utf8))
        return 0
    }

    /// The first pinnable thing in `path`.
    private static func pinSource(_ path: String, what: String) throws -> PinSource {
        do {
            guard let first = try PinSource.all(in: try SecureFile.read(path, what: what)).first else {
                throw CommandFailure("\(path): nothing to pin")
            }
            return first
        } catch let error as CAError {
            throw CommandFailure("\(path): \(error.reason)")
        }
    }
}
