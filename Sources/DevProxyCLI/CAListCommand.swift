import CertAuthority
import Foundation

/// `devproxy ca list` and `devproxy ca revoke`.
enum CAListCommand {
    static let listUsage = """
    devproxy ca list: every intermediate the ledger records, with its status.

      devproxy ca list                          SERIAL, EMAIL, NOT BEFORE, NOT AFTER, STATUS, SPKI PIN
      devproxy ca list --json                   the same as JSON (serial, email, status, spki_pin, …)
      devproxy ca list --ca-dir /secure/acme-ca

    Status: active, expired or revoked. Exit codes: 0; 1 when a ledger line cannot be read (each is a
    warning), 2 usage.
    \(CACommand.commonOptions)
    """

    static let revokeUsage = """
    devproxy ca revoke: revoke an intermediate and re-sign crl.pem.

      devproxy ca revoke 5f3a…                                   by serial (see devproxy ca list)
      devproxy ca revoke --email ana@acme.dev --reason keyCompromise
                                                                 every active intermediate of an engineer
      devproxy ca revoke 5f3a… --reason superseded               one replaced by a newer intermediate
      devproxy ca revoke --cert rogue.pem --reason keyCompromise  a CA the root signed that the ledger lacks

    Options: SERIAL | --email EMAIL | --cert FILE (one of them)  --reason REASON (default unspecified)
             --passphrase-file FILE  --ca-dir DIR
    Reasons (RFC 5280): \(RevocationReason.allCases.filter { $0 != .removeFromCRL }.map(\.rawValue).joined(separator: ", ")).
    \(CACommand.commonOptions)
    \(CACommand.passphraseNote)
    Then: publish crl.pem where your devices and tools check revocation.
    """

    static let crlUsage = """
    devproxy ca crl: re-sign crl.pem (every revocation so far, valid a week).

      devproxy ca crl                                   re-sign now
      devproxy ca crl --passphrase-file root.pass       with an encrypted root key
      0 3 * * 1  devproxy ca crl --ca-dir /secure/acme-ca --passphrase-file /secure/root.pass   weekly, from cron

    Options: --passphrase-file FILE  --ca-dir DIR. Takes no arguments.
    \(CACommand.commonOptions)
    \(CACommand.passphraseNote)
    Check a certificate against it: openssl verify -crl_check -CRLfile crl.pem -CAfile root.pem CERT.pem
    """

    /// One intermediate as `ca list --json` prints it: the certificate's facts (the root signed
    /// them), never a ledger line's words, which an edit could change (the text table's already).
    struct Row: Encodable {
        let serial: String
        let email: String
        let notBefore: String
        let notAfter: String
        let status: String
        let spkiPin: String
        let subject: String
        let permittedDomains: [String]
        let sha256Fingerprint: String
        let revocationReason: String?
        /// When the revocation was recorded.
        let revokedAt: String?

        enum CodingKeys: String, CodingKey {
            case serial, email, status, subject
            case notBefore = "not_before", notAfter = "not_after", spkiPin = "spki_pin"
            case permittedDomains = "permitted_domains", sha256Fingerprint = "sha256_fingerprint"
            case revocationReason = "revocation_reason", revokedAt = "revoked_at"
        }

        init(_ entry: IntermediateEntry) {
            serial = entry.serial
            email = entry.email
            notBefore = ISO8601.string(entry.notBefore)
            notAfter = ISO8601.string(entry.notAfter)
            status = entry.status.rawValue
            spkiPin = entry.certificate?.pin ?? entry.record.spkiPin ?? ""
            subject = entry.certificate?.subject ?? entry.record.subject ?? ""
            permittedDomains = entry.certificate?.permittedDNSSubtrees ?? entry.record.permittedDomains ?? []
            sha256Fingerprint = entry.certificate?.sha256Fingerprint ?? entry.record.sha256Fingerprint ?? ""
            revocationReason = entry.revocation?.reason
            revokedAt = entry.revocation?.issuedAt
        }
    }

    static func list(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir"], booleans: ["json"])
        let store = CACommand.store(arguments)
        _ = try store.rootCertificate()
        let (entries, problems) = try store.intermediates()
        for problem in problems {
            Output.warning("\(store.ledgerPath) \(problem)")
        }
        if arguments.flag("json") {
            Output.json(entries.map(Row.init))
        } else if entries.isEmpty {
            Output.line("No intermediates issued yet. Issue one with "
                        + "`devproxy ca issue\(CACommand.caDirSuffix(arguments)) --email ENGINEER@EXAMPLE.COM`.")
        } else {
            let header = ["SERIAL", "EMAIL", "NOT BEFORE", "NOT AFTER", "STATUS", "SPKI PIN"]
            let rows = entries.map { [$0.serial, $0.email, Output.date($0.notBefore), Output.date($0.notAfter),
                                      $0.status.rawValue, $0.record.spkiPin ?? ""] }
            Table.print(header: header, rows: rows)
        }
        return problems.isEmpty ? 0 : 1
    }

    static func revoke(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir", "email", "reason", "passphrase-file", "cert"], booleans: [])
        let serial = arguments.positionals.first
        let email = arguments.value("email")
        let certificateFile = arguments.value("cert")
        guard [serial, email, certificateFile].compactMap({ $0 }).count == 1, arguments.positionals.count <= 1 else {
            throw UsageError("give a SERIAL, --email EMAIL, or --cert FILE (a CA the ledger does not record; see `devproxy ca list`)")
        }
        let reasonText = arguments.value("reason") ?? "unspecified"
        let choices = RevocationReason.allCases.filter { $0 != .removeFromCRL }.map(\.rawValue).joined(separator: ", ")
        guard let reason = RevocationReason(argument: reasonText) else {
            throw UsageError("--reason \(reasonText) is not one of \(choices)")
        }
        // RFC 5280 §5.3.1: removeFromCRL is for delta CRLs, to take an entry off; in this full CRL
        // verifiers (OpenSSL's `-crl_check`) read the intermediate as not revoked.
        guard reason != .removeFromCRL else {
            throw UsageError("--reason removeFromCRL takes a certificate off a delta CRL; in crl.pem it would leave the "
                             + "intermediate valid. Use one of \(choices)")
        }
        let store = CACommand.store(arguments)
        // `superseded` by email, with more than one active: the new one that supersedes the others
        // would go too, leaving the engineer none (the README's own example did that).
        if let email, reason == .superseded {
            let active = try store.intermediates().entries
                .filter { $0.email.lowercased() == email.lowercased() && $0.status == .active }
            if active.count > 1 {
                // The ledger's order is the order they were issued in (two issued within a second
                // have the same notBefore).
                let newest = active.last!
                let older = active.filter { $0.serial != newest.serial }.map(\.serial)
                throw CommandFailure("\(email) holds \(active.count) active intermediates; --reason superseded by email would "
                                     + "revoke the one that supersedes the others too. Revoke the old one(s) by serial: "
                                     + older.map { "devproxy ca revoke\(CACommand.caDirSuffix(arguments)) \($0) --reason superseded" }
                                         .joined(separator: "; "))
            }
        }
        if let certificateFile {
            let bytes = try SecureFile.read(certificateFile, what: "the certificate")
            guard let certificate = try Certificate.all(from: bytes).first else {
                throw CommandFailure("\(certificateFile) holds no certificate")
            }
            let (recorded, crl) = try store.revokeUnrecorded(certificate, reason: reason,
                                                             passphrase: try CACommand.passphrase(arguments))
            Output.line(recorded ? "Revoked \(certificate.subject), serial \(certificate.serialHex) (\(reason.rawValue)); the "
                                   + "ledger did not record it as issued."
                                 : "Already revoked; nothing new to record.")
            try printCRL(store, summary: crl, arguments: arguments)
            return 0
        }
        let (revoked, crl) = try store.revokeAndSign(serial: serial, email: email, reason: reason,
                                                     passphrase: try CACommand.passphrase(arguments))
        if revoked.isEmpty {
            Output.line("Already revoked; nothing new to record.")
        }
        for entry in revoked {
            Output.line("Revoked intermediate \(entry.serial) of \(entry.email) (\(reason.rawValue)).")
        }
        try printCRL(store, summary: crl, arguments: arguments)
        return 0
    }

    /// `devproxy ca crl`: re-signs crl.pem (every revocation so far, nextUpdate a week on).
    static func crl(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir", "passphrase-file"], booleans: [])
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument \(arguments.positionals[0]); `devproxy ca crl` takes no arguments")
        }
        let store = CACommand.store(arguments)
        try printCRL(store, summary: try store.refreshCRL(passphrase: try CACommand.passphrase(arguments)), arguments: arguments)
        return 0
    }

    private static func printCRL(_ store: CAStore, summary: CAStore.CRLSummary, arguments: Arguments) throws {
        let retired = summary.retiredRoots.isEmpty ? ""
            : "; also signed by the retired root" + (summary.retiredRoots.count == 1 ? " " : "s ")
                + summary.retiredRoots.map { $0.commonName ?? $0.serialHex }.joined(separator: ", ")
        for serial in summary.keptWithoutLedger {
            Output.warning("the last CRL revoked serial \(serial), which \(store.directory)/ledger.jsonl no longer records "
                           + "as revoked (a lost or edited line): it stays on the CRL; restore the ledger's revocation line")
        }
        Output.line("Wrote \(store.crlPath) (\(summary.revoked) revoked, CRL number \(summary.number)\(retired)).")
        Output.line("It is valid until \(Output.date(summary.nextUpdate)): re-sign it before then with "
                    + "`devproxy ca crl\(CACommand.caDirSuffix(arguments))` "
                    + "(weekly from cron), and publish it where your devices and tools check revocation:")
        Output.line("  openssl verify -crl_check -CRLfile \(store.crlPath) -CAfile \(store.rootCertificatePath) CERT.pem")
    }
}

/// Aligned plain-text columns.
enum Table {
    static func print(header: [String], rows: [[String]]) {
        // Escaped first, so the columns line up as printed.
        let all = ([header] + rows).map { $0.map(Output.printable) }
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        for row in all {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            Output.line(cells.joined(separator: "  "))
        }
    }
}
