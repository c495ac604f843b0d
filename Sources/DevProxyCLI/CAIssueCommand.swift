import CertAuthority
import Foundation

/// `devproxy ca issue`: an intermediate for one engineer.
enum CAIssueCommand {
    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir", "email", "days", "permit-dns", "key", "out", "passphrase-file"],
                                      booleans: [])
        guard let email = arguments.value("email") else {
            throw UsageError("--email is required: the engineer the intermediate is for")
        }
        let days = try arguments.integer("days") ?? 7
        let store = CACommand.store(arguments)
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
        return 0
    }
}
