import Foundation

/// One issued intermediate as the ledger knows it.
public struct IntermediateEntry: Sendable {
    public enum Status: String, Sendable { case active, expired, revoked }

    public let record: LedgerRecord
    public let status: Status
    public let revocation: LedgerRecord?
    /// The certificate the record holds, which a root of this CA signed (`intermediates(now:)`
    /// keeps no other): the email and dates are its, not the record's words.
    public let certificate: Certificate?
    public var serial: String { record.serial }
    public var email: String { certificate?.email ?? record.email ?? "" }
    public var notBefore: Date { certificate?.notBefore ?? record.notBefore.flatMap(ISO8601.date) ?? .distantPast }
    public var notAfter: Date { certificate?.notAfter ?? record.notAfter.flatMap(ISO8601.date) ?? .distantPast }
}

extension CAStore {
    /// Longest validity an intermediate may have: a leaked one must die soon on its own.
    public static let maximumIntermediateDays = 90

    /// Issues an intermediate for one engineer and records it in the ledger.
    ///
    /// - Parameters:
    ///   - email: the engineer's address; goes into the subject and the SAN.
    ///   - days: validity, 1...90.
    ///   - permittedDNS: permitted DNS subtrees (critical nameConstraints) when non-empty.
    ///   - output: where to write the bundle (key, intermediate, root; 0600); default
    ///     `intermediates/<email>-<serial>.pem`.
    /// - Returns: the certificate and the path of the bundle.
    public func issueIntermediate(email: String, days: Int, permittedDNS: [String], keyType: KeyType,
                                  output: String?, passphrase: String?, now: Date = Date()) throws -> (Certificate, String) {
        try EmailAddress.validate(email)
        guard days > 0 else { throw CAError(.invalidInput, "--days must be a positive number of days") }
        guard days <= Self.maximumIntermediateDays else {
            throw CAError(.invalidInput, "--days \(days) is more than \(Self.maximumIntermediateDays); intermediates are short-lived by design")
        }
        for domain in permittedDNS {
            guard case .dns = try LeafName(domain.hasPrefix(".") ? String(domain.dropFirst()) : domain), !domain.contains("*") else {
                throw CAError(.invalidInput, "--permit-dns \(domain) is not a DNS domain")
            }
        }
        let root = try rootSigner(passphrase: passphrase)
        try root.checkValidity(at: now)
        _ = try ledgerOrFail()
        let key = try PrivateKey.generate(keyType)
        let notAfter = min(now.addingTimeInterval(TimeInterval(days) * 86400), root.certificate.notAfter)
        let notBefore = max(now.addingTimeInterval(-CertificateProfile.backdate), root.certificate.notBefore)
        let certificate = try CertificateProfile.intermediate(email: email, permittedDNS: permittedDNS,
                                                              notBefore: notBefore, notAfter: notAfter)
            .sign(publicKey: key, issuer: root.certificate, issuerKey: root.key)
        let path: String
        if let output {
            path = output
        } else {
            try SecureFile.makePrivateDirectory(intermediatesDirectory)
            path = intermediatesDirectory + "/\(email)-\(certificate.serialHex).pem"
        }
        // After a rotation, root.chain holds the cross-certificate: devices that trust only the
        // previous root still find a path through it.
        let bundle = try key.pem() + Array(certificate.pem.utf8) + root.chain.flatMap { Array($0.pem.utf8) }
            + Array(root.certificate.pem.utf8)
        // The ledger first: an intermediate that exists must be traceable, even if writing
        // the bundle then fails (it is then revoked).
        // The bundle's path as an absolute one: relative to the directory `ca issue` ran in, a
        // `run --ca-dir` from anywhere else found no intermediate.
        let recorded = path.hasPrefix("/") ? path
            : URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
                .standardizedFileURL.path
        try ledger.append(LedgerRecord(kind: .intermediate, certificate: certificate, issuer: root.certificate,
                                       keyType: keyType.rawValue, bundle: recorded, now: now))
        do {
            try SecureFile.write(bundle, to: path, mode: SecureFile.privateMode)
        } catch let error as CAError {
            // Its key went with the failed write, so no one holds it; revoked at once rather than
            // listed as active (`ca list`) with nothing behind it.
            let revoked = (try? ledger.append(LedgerRecord(revoking: certificate.serialHex, email: email,
                                                           reason: .cessationOfOperation, now: now))) != nil
                && (try? writeCRL(signer: root, passphrase: passphrase, now: now)) != nil
            throw CAError(error.code, error.reason + (revoked
                ? "; the intermediate \(certificate.serialHex) was recorded in the ledger and is now revoked (its key was never written)"
                : "; the intermediate \(certificate.serialHex) is in the ledger without a bundle: revoke it with "
                    + "`devproxy ca revoke \(certificate.serialHex)`"))
        }
        return (certificate, path)
    }

    /// Every intermediate in the ledger, oldest first, with its status at `now`.
    ///
    /// A record is believed only as far as the certificate it holds: one without a certificate,
    /// with a certificate no root of this CA signed, or whose serial is not its certificate's is
    /// left out with a problem; an email or dates that differ from the certificate's are the
    /// certificate's, with a problem; a serial recorded twice counts once. The ledger is the
    /// forensic record, and an edited line made `ca trace` name the wrong engineer, or a CA the
    /// root never signed listed as active and traced to a person.
    public func intermediates(now: Date = Date()) throws -> (entries: [IntermediateEntry], problems: [Ledger.Problem]) {
        let contents = try ledger.read()
        let roots = (try? allRoots()) ?? []
        var problems = contents.problems
        var revocations: [String: LedgerRecord] = [:]
        for record in contents.records where record.type == .revocation { revocations[record.serial] = record }
        var entries: [IntermediateEntry] = []
        var seen: Set<String> = []
        for (index, record) in contents.records.enumerated() where record.type == .intermediate {
            func problem(_ reason: String) {
                problems.append(Ledger.Problem(line: index + 1, reason: "intermediate \(record.serial) \(reason)"))
            }
            guard let certificate = record.storedCertificate else {
                problem("has no readable certificate: left out")
                continue
            }
            guard roots.contains(where: { certificate.isIssued(by: $0) }) else {
                problem("holds a certificate no root of this CA signed (\(certificate.subject)): left out")
                continue
            }
            guard normalizeSerial(record.serial) == normalizeSerial(certificate.serialHex) else {
                problem("holds the certificate of serial \(certificate.serialHex): left out")
                continue
            }
            guard seen.insert(normalizeSerial(record.serial)).inserted else {
                problem("is recorded twice: counted once")
                continue
            }
            if let email = record.email, let actual = certificate.email, email.lowercased() != actual.lowercased() {
                problem("names \(email), but its certificate (signed by the root) names \(actual): \(actual) it is")
            }
            // An edited date (a longer life written over the real one) is the certificate's too, and said.
            for (key, recorded, actual) in [("not_before", record.notBefore, certificate.notBefore),
                                            ("not_after", record.notAfter, certificate.notAfter)] {
                guard let recorded, ISO8601.date(recorded) != actual else { continue }
                problem("names \(key) \(recorded), but its certificate (signed by the root) says \(ISO8601.string(actual)): "
                        + "\(ISO8601.string(actual)) it is")
            }
            let revocation = revocations[record.serial]
            let status: IntermediateEntry.Status = revocation != nil ? .revoked : (certificate.notAfter < now ? .expired : .active)
            entries.append(IntermediateEntry(record: record, status: status, revocation: revocation, certificate: certificate))
        }
        return (entries, problems)
    }

    /// Reads the ledger, failing on a bad line (used before writing).
    func ledgerOrFail() throws -> Ledger.Contents {
        let contents = try ledger.read()
        if let problem = contents.problems.first {
            throw CAError(.ledgerCorrupt, "\(ledgerPath) \(problem); repair or remove that line, then retry")
        }
        return contents
    }
}
