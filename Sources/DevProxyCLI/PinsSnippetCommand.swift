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

    Formats: trustkit (Swift), trustkit-plist (Info.plist), nsc (Android XML), okhttp (Kotlin).
    The root comes from --ca-dir DIR; --backup takes a CSR, public or private key, or certificate.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" || raw.isEmpty {
            Output.line(usage)
            return raw.isEmpty ? 2 : 0
        }
        let arguments = try Arguments(raw, valued: ["domain", "format", "report-uri", "expiration", "backup", "ca-dir"],
                                      booleans: ["include-subdomains", "report-only"])
        guard let domain = arguments.value("domain"), !domain.isEmpty else { throw UsageError("--domain DOMAIN is required") }
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
        let store = CACommand.store(arguments)
        let root = try store.rootCertificate()
        var pins = [PinSnippet.PinLine(base64: SPKIPin.base64SHA256(root.spkiDER), comment: "DevProxy team root: \(root.subject)")]
        if let backup = arguments.value("backup") {
            let source: PinSource
            do {
                guard let first = try PinSource.all(in: try SecureFile.read(backup, what: "the backup key")).first else {
                    throw CommandFailure("\(backup): nothing to pin")
                }
                source = first
            } catch let error as CAError {
                throw CommandFailure("\(backup): \(error.reason)")
            }
            let what = source.subject.map { "backup: \($0)" } ?? "backup: \(source.keyDescription) \(source.kind.rawValue.replacingOccurrences(of: "_", with: " ")) in \((backup as NSString).lastPathComponent)"
            pins.append(PinSnippet.PinLine(base64: SPKIPin.base64SHA256(source.spkiDER), comment: what))
            if pins[1].base64 == pins[0].base64 { Output.warning("the backup key is the team root's own key; it backs up nothing") }
        }
        let snippet = PinSnippet(domain: domain, includeSubdomains: arguments.flag("include-subdomains"), pins: pins,
                                 reportURIs: arguments.values("report-uri"), reportOnly: arguments.flag("report-only"),
                                 expiration: arguments.value("expiration"))
        for warning in snippet.warnings(for: format) { Output.warning(warning) }
        FileHandle.standardOutput.write(Data(snippet.render(format).utf8))
        return 0
    }
}
