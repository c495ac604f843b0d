import CertAuthority
import Foundation
import PinningPolicy

/// `devproxy ca issue`: an intermediate for one engineer.
enum CAIssueCommand {
    static let usage = """
    devproxy ca issue: a short-lived intermediate CA for one engineer, signed by the team root.

      devproxy ca issue --email ana@acme.dev                    7 days, may sign any host name
      devproxy ca issue --email ana@acme.dev --days 30 --permit-dns acme.dev --permit-dns acme.test
                                                                only acme.dev, acme.test and their subdomains
      devproxy ca issue --email ana@acme.dev --out ana.pem --passphrase-file root.pass

    Options: --email EMAIL (required)  --days N (1 to \(CAStore.maximumIntermediateDays), default 7)
             --permit-dns DOMAIN (repeatable: X.509 name constraints)  --key \(KeyType.choices) (default ec-p256)
             --out FILE (default: intermediates/EMAIL-SERIAL.pem in the CA directory)  --passphrase-file FILE
             --ca-dir DIR
    Writes a bundle (the intermediate's key, the intermediate, the root; 0600) and records it in the ledger.
    \(CACommand.commonOptions)
    \(CACommand.passphraseNote)
    Then, on the engineer's machine: devproxy run --intermediate ana@acme.dev-SERIAL.pem
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir", "email", "days", "permit-dns", "key", "out", "passphrase-file"],
                                      booleans: [])
        guard let email = arguments.value("email") else {
            throw UsageError("--email is required: the engineer the intermediate is for")
        }
        let days = try arguments.integer("days") ?? 7
        let store = CACommand.store(arguments)
        // Intermediates this engineer already holds (any case: `revoke --email` matches so): a
        // second one is often meant to replace the first, which stays valid until revoked.
        let held = ((try? store.intermediates().entries) ?? [])
            .filter { $0.status == .active && $0.email.lowercased() == email.lowercased() }
        let (certificate, bundle) = try store.issueIntermediate(
            email: email, days: days, permittedDNS: arguments.values("permit-dns"),
            keyType: try CACommand.keyType(arguments), output: arguments.value("out"),
            passphrase: try CACommand.passphrase(arguments))
        Output.line("Issued an intermediate CA for \(email), valid until \(Output.date(certificate.notAfter)).")
        Output.line()
        Output.line("  serial       \(certificate.serialHex)")
        Output.line("  subject      \(certificate.subject)")
        Output.line("  key          \(certificate.keyDescription)")
        let permitted = certificate.permittedDNSSubtrees
        Output.line("  may sign     " + (permitted.isEmpty ? "any host name" : permitted.joined(separator: ", ") + " (and their subdomains)"))
        Output.line("  SPKI pin     \(certificate.pin)")
        Output.line("  bundle       \(bundle) (key, intermediate, root; 0600)")
        Output.line("  recorded in  \(store.ledgerPath)")
        Output.line()
        Output.line("Give the bundle to \(email) over a private channel. They run:")
        Output.line("  devproxy run --intermediate \((bundle as NSString).lastPathComponent)")
        // A public suffix (`com`, `co.uk`) permits every site registered under it.
        if case .success(let suffixes) = PublicSuffixList.system {
            for domain in permitted where suffixes.isPublicSuffix(domain.hasPrefix(".") ? String(domain.dropFirst()) : domain) {
                Output.warning("--permit-dns \(domain) is a public suffix: this intermediate may sign for every site "
                               + "under it, which constrains next to nothing; name the team's own domains")
            }
        }
        // An intermediate never outlives its root: asked for longer, it ends with the root, silently.
        if let root = try? store.rootCertificate(), abs(certificate.notAfter.timeIntervalSince(root.notAfter)) < 1 {
            let short = Int((Date().addingTimeInterval(TimeInterval(days) * 86_400).timeIntervalSince(root.notAfter) / 3600).rounded())
            if short > 0 {
                Output.warning("the root ends on \(Output.date(root.notAfter)), and this intermediate with it: \(short) h short of the "
                               + "\(days) day(s) asked; make the next root now (`devproxy ca init --next`, then `devproxy ca "
                               + "rotate`), or every intermediate after this one is shorter")
            }
        }
        for entry in held {
            Output.warning("\(entry.email) already holds the active intermediate \(entry.serial) (valid until "
                           + "\(Output.date(entry.notAfter))); it stays valid: if this one replaces it, "
                           + "`devproxy ca revoke\(CACommand.caDirSuffix(arguments)) \(entry.serial) --reason superseded`")
        }
        return 0
    }
}
