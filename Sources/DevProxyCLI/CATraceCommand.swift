import CertAuthority
import Foundation

/// `devproxy ca trace FILE`: which engineer's intermediate a certificate or chain came from.
enum CATraceCommand {
    static let usage = """
    devproxy ca trace: which engineer's intermediate issued a certificate (the ledger's record).

      devproxy ca trace leaf.pem                            a PEM or DER certificate, or a whole chain
      devproxy ca trace pin-failure-report.json             a TrustKit pin-failure report's served chain
      devproxy ca trace leaf.pem --json                     found, serial, email, status, findings

    Options: FILE (one)  --json  --ca-dir DIR
    Exit codes: 0 traced; 1 not issued by this CA, or a CA certificate the ledger does not record;
    2 usage.
    \(CACommand.commonOptions)
    Then, for an active intermediate: devproxy ca revoke SERIAL --reason keyCompromise
    """

    struct Finding: Encodable {
        let relation: String
        let subject: String
        let certificateSerial: String
        let serial: String?
        let email: String?
        let status: String?
        let notBefore: String?
        let notAfter: String?
        /// When the intermediate's revocation was recorded, and why.
        let revokedAt: String?
        let revocationReason: String?
        /// A certificate the intermediate signed whose not-before is past that revocation: its key
        /// was still in use afterwards.
        let signedAfterRevocation: Bool?

        enum CodingKeys: String, CodingKey {
            case relation, subject, serial, email, status
            case certificateSerial = "certificate_serial", notBefore = "not_before", notAfter = "not_after"
            case revokedAt = "revoked_at", revocationReason = "revocation_reason"
            case signedAfterRevocation = "signed_after_revocation"
        }
    }

    struct Report: Encodable {
        let found: Bool
        let serial: String?
        let email: String?
        let status: String?
        let findings: [Finding]
    }

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir"], booleans: ["json"])
        guard let file = arguments.positionals.first, arguments.positionals.count == 1 else {
            throw UsageError("give one FILE: a PEM/DER certificate or chain, or a TrustKit pin-failure report")
        }
        let store = CACommand.store(arguments)
        let input = try SecureFile.read(file, what: "the certificate")
        let findings: [TraceFinding]
        do {
            findings = try store.trace(input)
        } catch let error as CAError where error.code == .invalidInput || error.code == .corruptCertificate {
            throw CommandFailure("\(file): \(error.reason)")
        }
        // A bad ledger line may be the record a chain traces to: said, as `ca list` says it.
        let problems = (try? store.intermediates().problems) ?? []
        for problem in problems {
            Output.warning("\(store.ledgerPath) \(problem)")
        }
        let unrecorded = findings.contains { $0.relation == .unrecordedCA }
        let rows = findings.map { finding in
            // The intermediate's dates are its certificate's (the root signed them), not a ledger line's words.
            Finding(relation: finding.relation.rawValue, subject: finding.certificate.subject,
                    certificateSerial: finding.certificate.serialHex, serial: finding.intermediate?.serial,
                    email: finding.intermediate?.email, status: finding.intermediate?.status.rawValue,
                    notBefore: finding.intermediate.map { ISO8601.string($0.notBefore) },
                    notAfter: finding.intermediate.map { ISO8601.string($0.notAfter) },
                    revokedAt: finding.intermediate?.revocation?.issuedAt,
                    revocationReason: finding.intermediate?.revocation?.reason,
                    signedAfterRevocation: finding.relation == .issuedByIntermediate
                        ? signedAfterRevocation(finding.certificate, finding.intermediate) : nil)
        }
        let primary = findings.first { $0.intermediate != nil }?.intermediate
        if arguments.flag("json") {
            Output.json(Report(found: !findings.isEmpty, serial: primary?.serial, email: primary?.email,
                               status: primary?.status.rawValue, findings: rows))
            return findings.isEmpty || unrecorded ? 1 : 0
        }
        let current = try? store.rootCertificate()
        guard !findings.isEmpty else {
            // The `unpinned` persona's leaves come from the QA alternate root kept beside the team's.
            let alternate = QAAlternateRoot(store: store)
            if alternate.root(of: (try? CAStore.certificates(inTraceInput: input)) ?? []) != nil {
                Output.line("Not issued by this CA's team root: \(file) comes from its QA alternate root "
                            + "(\(alternate.certificatePath)), which signs the `unpinned` persona's leaves for pinning QA. "
                            + "No engineer's intermediate is involved.")
                return 1
            }
            Output.line("Not issued by this CA (\(store.directory)): no certificate in \(file) is the root, one of its intermediates, or signed by them.")
            return 1
        }
        for finding in findings {
            let subject = finding.certificate.subject
            switch finding.relation {
            case .isRoot:
                let which = finding.root == current ? "this CA's root." : "a previous root of this CA (retired by `ca rotate`)."
                Output.line("\(subject): " + which)
            case .issuedByRoot:
                let which = finding.root == current
                    ? "this CA's root" : "a previous root of this CA (\(finding.root?.subject ?? "?"))"
                Output.line("\(subject): signed directly by \(which) (team-shared signing).")
            case .unrecordedCA:
                let which = finding.root == current ? "this CA's root" : "a previous root of this CA (\(finding.root?.subject ?? "?"))"
                Output.line("\(subject): a CA certificate signed by \(which) that the ledger does not record"
                            + (problems.isEmpty ? "" : " (its record may be the unreadable ledger line above)")
                            + "; serial \(finding.certificate.serialHex), email \(finding.certificate.email ?? "none"), valid "
                            + "\(Output.date(finding.certificate.notBefore)) to \(Output.date(finding.certificate.notAfter)). "
                            + "Whoever holds its key signs leaves that chain to the root: find out who, and revoke it with "
                            + "`devproxy ca revoke\(CACommand.caDirSuffix(arguments)) --cert FILE` (FILE holding this certificate).")
            case .isCrossCertificate:
                let signer = finding.root?.subject ?? "an older root"
                Output.line("\(subject): this CA's cross-certificate (the newer root signed by \(signer)), "
                            + "valid until \(Output.date(finding.certificate.notAfter)).")
            case .isIntermediate, .issuedByIntermediate:
                guard let entry = finding.intermediate else { continue }
                let what = finding.relation == .isIntermediate ? "is the intermediate of" : "was issued by the intermediate of"
                Output.line("\(subject): \(what) \(entry.email)")
                var revoked = ""
                if let revocation = entry.revocation {
                    let when = revocation.revokedAt.map { Output.date($0) } ?? revocation.issuedAt
                    revoked = " " + when + (revocation.reason.map { " (\($0))" } ?? "")
                }
                Output.line("  serial \(entry.serial), \(entry.status.rawValue)\(revoked), valid \(Output.date(entry.notBefore)) to \(Output.date(entry.notAfter))")
                if finding.relation == .issuedByIntermediate, signedAfterRevocation(finding.certificate, entry) == true {
                    Output.line("  signed after that revocation (its not-before, \(Output.date(finding.certificate.notBefore)), is later): "
                                + "the intermediate's key was still in use, by its engineer's proxy or by whoever holds a copy")
                }
            }
        }
        if let primary, primary.status == .active {
            Output.line("To stop it: devproxy ca revoke\(CACommand.caDirSuffix(arguments)) \(primary.serial) --reason keyCompromise")
        }
        return unrecorded ? 1 : 0
    }

    /// Whether `certificate`, signed by `entry`'s intermediate, starts after that intermediate's
    /// revocation was recorded; nil when it is not revoked.
    private static func signedAfterRevocation(_ certificate: Certificate, _ entry: IntermediateEntry?) -> Bool? {
        guard let revokedAt = entry?.revocation?.revokedAt else { return nil }
        return certificate.notBefore > revokedAt
    }
}
