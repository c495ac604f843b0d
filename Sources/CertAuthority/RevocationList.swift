import CTLS
import Foundation

/// Builds the root's CRL (RFC 5280 §5) from the ledger's revocations.
enum RevocationList {
    /// How long a CRL is valid: relying parties must fetch a fresh one within a week.
    static let validity: TimeInterval = 7 * 86400

    /// A signed CRL in PEM.
    ///
    /// - Parameters:
    ///   - revoked: (serial hex, revocation date, reason) for each revoked certificate.
    ///   - number: the cRLNumber, increasing with each CRL.
    static func pem(signer: Signer, revoked: [(serial: String, date: Date, reason: RevocationReason)],
                    number: Int, now: Date) throws -> [UInt8] {
        OpenSSLErrorQueue.clear()
        guard let crl = X509_CRL_new() else { throw CAError.openSSL("allocating a CRL") }
        defer { X509_CRL_free(crl) }
        let lastUpdate = ASN1_TIME_set(nil, time_t(now.timeIntervalSince1970))
        let nextUpdate = ASN1_TIME_set(nil, time_t(now.addingTimeInterval(validity).timeIntervalSince1970))
        defer { ASN1_TIME_free(lastUpdate); ASN1_TIME_free(nextUpdate) }
        guard X509_CRL_set_version(crl, 1) == 1,
              X509_CRL_set_issuer_name(crl, X509_get_subject_name(signer.certificate.pointer)) == 1,
              X509_CRL_set1_lastUpdate(crl, lastUpdate) == 1,
              X509_CRL_set1_nextUpdate(crl, nextUpdate) == 1 else {
            throw CAError.openSSL("preparing the CRL")
        }
        for entry in revoked {
            try addEntry(crl, entry)
        }
        guard X509_CRL_sort(crl) == 1 else { throw CAError.openSSL("sorting the CRL") }
        try addExtensions(crl, signer: signer, number: number)
        guard X509_CRL_sign(crl, signer.key.pointer, signer.key.signingDigest) > 0 else {
            throw CAError.openSSL("signing the CRL")
        }
        let bio = try MemoryBIO()
        guard PEM_write_bio_X509_CRL(bio.pointer, crl) == 1 else { throw CAError.openSSL("encoding the CRL") }
        return bio.bytes
    }

    /// The cRLNumber of every CRL in `pem` (none when it holds no readable CRL).
    static func numbers(inPEM pem: [UInt8]) -> [Int] {
        guard let bio = try? MemoryBIO(bytes: pem) else { return [] }
        var numbers: [Int] = []
        while let crl = PEM_read_bio_X509_CRL(bio.pointer, nil, nil, nil) {
            defer { X509_CRL_free(crl) }
            if let raw = X509_CRL_get_ext_d2i(crl, NID_crl_number, nil, nil) {
                let integer = raw.assumingMemoryBound(to: ASN1_INTEGER.self)
                let value = ASN1_INTEGER_get(integer)
                ASN1_INTEGER_free(integer)
                if value > 0 { numbers.append(Int(value)) }
            }
        }
        OpenSSLErrorQueue.clear()
        return numbers
    }

    /// The entries (serial in lower-case hex, revocation date, reason) of the CRLs in `pem` that
    /// `issuer` signed (their signature checked against its key); none when it holds no such CRL.
    static func entries(inPEM pem: [UInt8], signedBy issuer: Certificate)
        -> [(serial: String, date: Date, reason: RevocationReason)] {
        guard let bio = try? MemoryBIO(bytes: pem), let key = X509_get0_pubkey(issuer.pointer) else { return [] }
        var found: [(serial: String, date: Date, reason: RevocationReason)] = []
        while let crl = PEM_read_bio_X509_CRL(bio.pointer, nil, nil, nil) {
            defer { X509_CRL_free(crl) }
            guard X509_CRL_verify(crl, key) == 1, let list = X509_CRL_get_REVOKED(crl) else { continue }
            for index in 0..<OPENSSL_sk_num(list) {
                guard let entry = OpaquePointer(OPENSSL_sk_value(list, index)),
                      let number = X509_REVOKED_get0_serialNumber(entry),
                      let bn = ASN1_INTEGER_to_BN(number, nil) else { continue }
                defer { BN_free(bn) }
                guard let hex = BN_bn2hex(bn) else { continue }
                let serial = String(cString: hex).lowercased()
                CRYPTO_free(hex, nil, 0)
                var seconds: Int64 = 0
                var tm = tm()
                if let time = X509_REVOKED_get0_revocationDate(entry), ASN1_TIME_to_tm(time, &tm) == 1 {
                    seconds = Int64(timegm(&tm))
                }
                var reason = RevocationReason.unspecified
                if let raw = X509_REVOKED_get_ext_d2i(entry, NID_crl_reason, nil, nil) {
                    let code = Int(ASN1_ENUMERATED_get(raw.assumingMemoryBound(to: ASN1_ENUMERATED.self)))
                    ASN1_ENUMERATED_free(raw.assumingMemoryBound(to: ASN1_ENUMERATED.self))
                    reason = RevocationReason.allCases.first { $0.code == code } ?? .unspecified
                }
                found.append((serial, Date(timeIntervalSince1970: TimeInterval(seconds)), reason))
            }
        }
        OpenSSLErrorQueue.clear()
        return found
    }

    private static func addEntry(_ crl: OpaquePointer, _ entry: (serial: String, date: Date, reason: RevocationReason)) throws {
        guard let revoked = X509_REVOKED_new() else { throw CAError.openSSL("allocating a CRL entry") }
        var bn: OpaquePointer?
        guard BN_hex2bn(&bn, entry.serial) > 0, let bn else {
            X509_REVOKED_free(revoked)
            throw CAError(.invalidInput, "serial \(entry.serial) is not hexadecimal")
        }
        defer { BN_free(bn) }
        let serial = BN_to_ASN1_INTEGER(bn, nil)
        let date = ASN1_TIME_set(nil, time_t(entry.date.timeIntervalSince1970))
        let reason = ASN1_ENUMERATED_new()
        defer { ASN1_INTEGER_free(serial); ASN1_TIME_free(date); ASN1_ENUMERATED_free(reason) }
        guard X509_REVOKED_set_serialNumber(revoked, serial) == 1,
              X509_REVOKED_set_revocationDate(revoked, date) == 1,
              ASN1_ENUMERATED_set(reason, entry.reason.code) == 1,
              X509_REVOKED_add1_ext_i2d(revoked, NID_crl_reason, UnsafeMutableRawPointer(reason), 0, 0) == 1,
              X509_CRL_add0_revoked(crl, revoked) == 1 else {
            X509_REVOKED_free(revoked)
            throw CAError.openSSL("adding serial \(entry.serial) to the CRL")
        }
    }

    private static func addExtensions(_ crl: OpaquePointer, signer: Signer, number: Int) throws {
        var context = X509V3_CTX()
        CTLS_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, signer.certificate.pointer, nil, nil, crl, 0)
        guard let aki = X509V3_EXT_conf_nid(nil, &context, NID_authority_key_identifier, "keyid:always") else {
            throw CAError.openSSL("building the CRL's authorityKeyIdentifier")
        }
        defer { X509_EXTENSION_free(aki) }
        let crlNumber = ASN1_INTEGER_new()
        defer { ASN1_INTEGER_free(crlNumber) }
        guard X509_CRL_add_ext(crl, aki, -1) == 1,
              ASN1_INTEGER_set(crlNumber, number) == 1,
              X509_CRL_add1_ext_i2d(crl, NID_crl_number, UnsafeMutableRawPointer(crlNumber), 0, 0) == 1 else {
            throw CAError.openSSL("adding CRL extensions")
        }
    }
}

extension CAStore {
    /// Revokes intermediates by serial or by email, records it in the ledger, and rewrites
    /// `crl.pem` with every revocation so far.
    ///
    /// - Returns: the entries revoked now.
    /// - Throws: `.notFound` when nothing matches; entries already revoked are not revoked twice.
    public func revoke(serial: String?, email: String?, reason: RevocationReason, passphrase: String?,
                       now: Date = Date()) throws -> [IntermediateEntry] {
        try revokeAndSign(serial: serial, email: email, reason: reason, passphrase: passphrase, now: now).revoked
    }

    /// `revoke`, with what it wrote to `crl.pem`.
    public func revokeAndSign(serial: String?, email: String?, reason: RevocationReason, passphrase: String?,
                              now: Date = Date()) throws -> (revoked: [IntermediateEntry], crl: CRLSummary) {
        guard reason != .removeFromCRL else {
            throw CAError(.invalidInput, "removeFromCRL is not a reason to revoke: in a full CRL it leaves the certificate valid")
        }
        let signer = try rootSigner(passphrase: passphrase)
        _ = try ledgerOrFail()
        let all = try intermediates(now: now).entries
        let wanted = serial.map { normalizeSerial($0) }
        let matching = all.filter { entry in
            (wanted.map { normalizeSerial(entry.serial) == $0 } ?? false) || (email.map { entry.email.lowercased() == $0.lowercased() } ?? false)
        }
        guard !matching.isEmpty else {
            throw CAError(.notFound, "no intermediate with " + (serial.map { "serial \($0)" } ?? "email \(email ?? "")") + " in \(ledgerPath); see `devproxy ca list`")
        }
        // A hold (certificateHold) may become a revocation for good (keyCompromise, …): the later
        // record is the one the CRL carries. It used to be "already revoked", the hold for ever.
        let fresh = matching.filter { entry in
            entry.status != .revoked || (entry.revocation?.reason.flatMap(RevocationReason.init(argument:)) == .certificateHold
                                         && reason != .certificateHold)
        }
        for entry in fresh {
            try ledger.append(LedgerRecord(revoking: entry.serial, email: entry.email, reason: reason, now: now))
        }
        return (fresh, try writeCRL(signer: signer, passphrase: passphrase, now: now))
    }

    /// Revokes a CA certificate a root of this CA signed that the ledger does not record (its line
    /// lost, or never written: `ca trace` calls it `unrecorded_ca`), as `openssl ca -revoke` takes
    /// any certificate its CA signed: the revocation is recorded and the CRL rewritten. Such a CA
    /// could not be put on the CRL at all. A recorded intermediate goes through `revokeAndSign`.
    /// - Returns: whether a revocation was recorded (false: it was already revoked), and the CRL.
    public func revokeUnrecorded(_ certificate: Certificate, reason: RevocationReason, passphrase: String?,
                                 now: Date = Date()) throws -> (recorded: Bool, crl: CRLSummary) {
        guard reason != .removeFromCRL else {
            throw CAError(.invalidInput, "removeFromCRL is not a reason to revoke: in a full CRL it leaves the certificate valid")
        }
        let signer = try rootSigner(passphrase: passphrase)
        let contents = try ledgerOrFail()
        guard try allRoots().contains(where: { certificate.isIssued(by: $0) }) else {
            throw CAError(.notFound, "\(certificate.subject) was not signed by a root of this CA: its own CA revokes it")
        }
        let serial = normalizeSerial(certificate.serialHex)
        let known = try intermediates(now: now).entries.first { normalizeSerial($0.serial) == serial }
        if let known {
            throw CAError(.invalidInput, "\(certificate.serialHex) is the recorded intermediate of \(known.email): revoke it with "
                          + "`devproxy ca revoke \(certificate.serialHex)`")
        }
        let already = contents.records.contains { $0.type == .revocation && normalizeSerial($0.serial) == serial }
        if !already {
            try ledger.append(LedgerRecord(revoking: certificate.serialHex, email: certificate.email ?? "", reason: reason, now: now))
        }
        return (!already, try writeCRL(signer: signer, passphrase: passphrase, now: now))
    }

    /// What `writeCRL` wrote.
    public struct CRLSummary: Sendable {
        /// Serials on it.
        public let revoked: Int
        /// Its cRLNumber.
        public let number: Int
        /// When relying parties need a fresh one.
        public let nextUpdate: Date
        /// Retired roots that signed a CRL of their own in the file.
        public let retiredRoots: [Certificate]
        /// Serials (hex) the previous CRL listed and the ledger no longer records as revoked:
        /// kept on the CRL, and worth a warning (the ledger lost a line).
        public let keptWithoutLedger: [String]
    }

    /// Re-signs `crl.pem` with every revocation so far and a new nextUpdate (a week on):
    /// `devproxy ca crl`, from cron, before the last one runs out.
    @discardableResult
    public func refreshCRL(passphrase: String?, now: Date = Date()) throws -> CRLSummary {
        try writeCRL(signer: try rootSigner(passphrase: passphrase), passphrase: passphrase, now: now)
    }

    /// Rewrites `crl.pem` from the ledger: the root's CRL, then one signed by each root being
    /// retired (`ca rotate`'s transition: devices that trust only the old root check the
    /// intermediates it issued against its own CRL, and `openssl verify -CRLfile` reads every
    /// CRL in the file). The cRLNumber goes up with every write (RFC 5280 §5.2.3), also when
    /// nothing was added.
    @discardableResult
    func writeCRL(signer: Signer, passphrase: String?, now: Date) throws -> CRLSummary {
        let contents = try ledgerOrFail()
        let revocations = contents.records.filter { $0.type == .revocation }
        // One entry per serial, the latest record's (a hold escalated to a revocation for good).
        // (The CRL sorts its entries: the dictionary's order does not reach it.)
        var latest: [String: LedgerRecord] = [:]
        for record in revocations { latest[normalizeSerial(record.serial)] = record }
        var entries = latest.values.map { record in
            (serial: record.serial, date: ISO8601.date(record.issuedAt) ?? now,
             reason: record.reason.flatMap(RevocationReason.init(argument:)) ?? .unspecified)
        }
        let previousPEM = try? SecureFile.read(crlPath, what: "the CRL")
        let previous = previousPEM.map(RevocationList.numbers(inPEM:)) ?? []
        // A revocation the last CRL (signed by this root) lists stays on the new one, whatever the
        // ledger says now: a lost or edited ledger line (a torn write, a restored backup, the
        // advice to remove a torn line) silently took a keyCompromise revocation off the CRL and
        // made that intermediate valid again. RFC 5280 §3.3: an entry stays until the
        // certificate expires; `openssl ca` never drops one either.
        var listed = Set(latest.keys)
        var kept: [String] = []
        for entry in previousPEM.map({ RevocationList.entries(inPEM: $0, signedBy: signer.certificate) }) ?? []
        where listed.insert(normalizeSerial(entry.serial)).inserted {
            entries.append(entry)
            kept.append(normalizeSerial(entry.serial))
        }
        // Every CRL has a higher number than the last one published (RFC 5280 §5.2.3): the last
        // one is remembered in `crlnumber` as well as read from crl.pem, so that a lost or
        // deleted crl.pem does not restart the count below numbers relying parties have seen
        // (`openssl ca` keeps its `crlnumber` file for the same reason).
        let remembered = (try? SecureFile.read(crlNumberPath, what: "the CRL number", limit: 64))
            .flatMap { Int(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        let number = max(revocations.count + 1, (previous.max() ?? 0) + 1, remembered + 1)
        var pem = try RevocationList.pem(signer: signer, revoked: entries, number: number, now: now)
        let retired = try retiringRoots(now: now).filter { now <= $0.notAfter }
        for old in retired {
            let keyPath = retiredDirectory + "/root-\(old.serialHex).key"
            let key = try PrivateKey(pem: try SecureFile.read(keyPath, what: "the retired root's key"), passphrase: passphrase)
            let oldSigner = try Signer(certificate: old, key: key, root: old, crossCertificates: [])
            pem += try RevocationList.pem(signer: oldSigner, revoked: entries, number: number, now: now)
        }
        try SecureFile.write(pem, to: crlPath, mode: SecureFile.publicMode)
        try SecureFile.write(Array("\(number)\n".utf8), to: crlNumberPath, mode: SecureFile.publicMode)
        return CRLSummary(revoked: entries.count, number: number, nextUpdate: now.addingTimeInterval(RevocationList.validity),
                          retiredRoots: retired, keptWithoutLedger: kept)
    }

    func normalizeSerial(_ serial: String) -> String {
        let hex = serial.lowercased().filter { $0 != ":" }
        let trimmed = hex.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
}
