import Foundation

/// What `ca rotate` made.
public struct RootRotation: Sendable {
    /// The root that is being retired (still trusted by devices until they move).
    public let previous: Certificate
    /// The new root, self-signed with the key `ca init --next` made.
    public let root: Certificate
    /// The new root's subject and key, signed by the previous root: served after the
    /// intermediate during the transition window.
    public let cross: Certificate
    /// Where the previous root's certificate and key were kept.
    public let retiredCertificatePath: String
}

extension CAStore {
    /// The next root's private key, made ahead of time by `ca init --next` (0600, encrypted like
    /// `root.key`).
    public var nextRootKeyPath: String { directory + "/next-root.key" }
    /// The next root's public key (PEM `PUBLIC KEY`, 0644): what `pins snippet` reads for the
    /// backup pin without needing the passphrase.
    public var nextRootPublicKeyPath: String { directory + "/next-root.pub" }
    /// The current root signed by the previous one, while a rotation's transition window lasts.
    public var crossCertificatePath: String { directory + "/cross.pem" }
    /// Retired roots' certificates and keys: `retired/root-<serial>.pem` and `.key`.
    public var retiredDirectory: String { directory + "/retired" }

    /// Whether `ca init --next` made a key that `ca rotate` has not used yet.
    public var hasNextRootKey: Bool { FileManager.default.fileExists(atPath: nextRootKeyPath) }

    /// Makes the next root key now, so apps can ship its pin as the backup pin long before the
    /// rotation.
    ///
    /// The passphrase must open the current root key (so only the holder of the root can stage
    /// its successor) and encrypts the new key the same way.
    /// - Returns: the next key's public half, as a pin source.
    /// - Throws: `.caMissing`, `.caExists` when a next key is already waiting, passphrase errors.
    @discardableResult
    public func makeNextRootKey(keyType: KeyType, passphrase: String?, now: Date = Date()) throws -> PinSource {
        let root = try rootSigner(passphrase: passphrase)
        if hasNextRootKey {
            throw CAError(.caExists, "\(nextRootKeyPath) already exists: a next root key is waiting; rotate to it with "
                          + "`devproxy ca rotate`, or remove it to make another")
        }
        _ = try ledgerOrFail()
        let rootKey = try SecureFile.read(rootKeyPath, what: "the root key")
        let encrypted = String(decoding: rootKey, as: UTF8.self).contains("ENCRYPTED")
        let key = try PrivateKey.generate(keyType)
        let spki = try key.publicKeyDER
        try SecureFile.write(try key.pem(passphrase: encrypted ? passphrase : nil), to: nextRootKeyPath,
                             mode: SecureFile.privateMode, exclusive: true)
        do {
            try SecureFile.write(Array(PEMBlock(label: "PUBLIC KEY", der: spki).text.utf8), to: nextRootPublicKeyPath,
                                 mode: SecureFile.publicMode)
            try ledger.append(try LedgerRecord(nextRootKey: key, keyType: keyType.rawValue, now: now))
        } catch {
            unlink(nextRootKeyPath)
            unlink(nextRootPublicKeyPath)
            throw error
        }
        _ = root  // opened only to prove the caller holds the current root
        return try nextRootPublicKey() ?? { throw CAError(.io, "\(nextRootPublicKeyPath) could not be read back") }()
    }

    /// The waiting next root key's public half, or nil when there is none.
    public func nextRootPublicKey() throws -> PinSource? {
        guard FileManager.default.fileExists(atPath: nextRootPublicKeyPath) else { return nil }
        let bytes = try SecureFile.read(nextRootPublicKeyPath, what: "the next root's public key")
        return try PinSource.all(in: bytes).first
    }

    /// Turns the next root key into the root: a new self-signed root, a cross-certificate of it
    /// signed by the current root, the current root kept in `retired/`, the ledger told.
    ///
    /// - Parameters:
    ///   - name: the new root's common name; default the current one with a generation suffix
    ///     (`Acme Dev Root` → `Acme Dev Root G2` → `G3`), so the two roots' names differ and path
    ///     builders never confuse them.
    ///   - days: the new root's validity.
    ///   - transitionDays: the cross-certificate's validity (at most the current root's).
    /// - Throws: `.notFound` without a next key, `.signerExpired` when the current root expired.
    public func rotate(name: String?, days: Int, transitionDays: Int, passphrase: String?,
                       now: Date = Date()) throws -> RootRotation {
        try Self.checkRootDays(days)
        guard transitionDays > 0, transitionDays <= Self.maximumRootDays else {
            throw CAError(.invalidInput, "--transition-days must be a number of days from 1 to \(Self.maximumRootDays)")
        }
        let old = try rootSigner(passphrase: passphrase)
        guard hasNextRootKey else {
            throw CAError(.notFound, "no next root key in \(directory); make it first with "
                          + "`devproxy ca init --next` and ship its pin as the backup pin")
        }
        guard now <= old.certificate.notAfter else {
            throw CAError(.signerExpired, "the current root expired on \(ISO8601.string(old.certificate.notAfter)); a "
                          + "cross-certificate needs a valid root (create a new CA with `ca init` instead)")
        }
        _ = try ledgerOrFail()
        let nextPEM = try SecureFile.read(nextRootKeyPath, what: "the next root key")
        let next: PrivateKey
        do {
            next = try PrivateKey(pem: nextPEM, passphrase: passphrase)
        } catch let error as CAError where error.code == .corruptKey {
            throw CAError(.corruptKey, "\(nextRootKeyPath): \(error.reason)")
        }
        let subjectName = name ?? Self.nextGenerationName(old.certificate.commonName ?? "DevProxy Team Root")
        guard !subjectName.isEmpty, subjectName.count <= 64 else {
            throw CAError(.invalidInput, "--name must be 1 to 64 characters (the X.509 limit for a common name)")
        }
        guard subjectName != old.certificate.commonName else {
            throw CAError(.invalidInput, "--name \(subjectName) is the current root's name; give the new root another")
        }
        let unit = old.certificate.subject.contains("OU = ") ? Self.organizationalUnit(old.certificate) : nil
        let notBefore = now.addingTimeInterval(-CertificateProfile.backdate)
        let profile = CertificateProfile.root(name: subjectName, unit: unit, notBefore: notBefore,
                                              notAfter: now.addingTimeInterval(TimeInterval(days) * 86400))
        let root = try profile.sign(publicKey: next, issuer: nil, issuerKey: next)
        var crossProfile = profile
        crossProfile.serial = CertificateBuilder.randomSerial()
        crossProfile.notBefore = max(notBefore, old.certificate.notBefore)
        let windowEnd = now.addingTimeInterval(TimeInterval(transitionDays) * 86400)
        crossProfile.notAfter = min(windowEnd, old.certificate.notAfter)
        let cross = try crossProfile.sign(publicKey: next, issuer: old.certificate, issuerKey: old.key)
        guard cross.isIssued(by: old.certificate), root.isSelfSigned else {
            throw CAError(.openSSL, "the new root or its cross-certificate does not verify; nothing was changed")
        }

        try SecureFile.makePrivateDirectory(retiredDirectory)
        let retired = retiredDirectory + "/root-\(old.certificate.serialHex)"
        try SecureFile.write(Array(old.certificate.pem.utf8), to: retired + ".pem", mode: SecureFile.publicMode)
        try SecureFile.write(try SecureFile.read(rootKeyPath, what: "the root key"), to: retired + ".key",
                             mode: SecureFile.privateMode)
        // The ledger before the switch: a root in use must always be traceable.
        let keyType = KeyType(argument: next.algorithmDescription)?.rawValue ?? next.algorithmDescription
        try ledger.append(LedgerRecord(kind: .root, certificate: root, issuer: nil, keyType: keyType, bundle: nil,
                                       now: now))
        try ledger.append(LedgerRecord(kind: .crossCertificate, certificate: cross, issuer: old.certificate,
                                       keyType: keyType, bundle: nil, now: now))
        try SecureFile.write(Array(cross.pem.utf8), to: crossCertificatePath, mode: SecureFile.publicMode)
        try SecureFile.write(nextPEM, to: rootKeyPath, mode: SecureFile.privateMode)
        try SecureFile.write(Array(root.pem.utf8), to: rootCertificatePath, mode: SecureFile.publicMode)
        unlink(nextRootKeyPath)
        unlink(nextRootPublicKeyPath)
        // Revocations so far, now under the new root too (and still under the old one).
        if FileManager.default.fileExists(atPath: crlPath) {
            try refreshCRL(passphrase: passphrase, now: now)
        }
        return RootRotation(previous: old.certificate, root: root, cross: cross,
                            retiredCertificatePath: retired + ".pem")
    }

    /// The cross-certificates to send after certificates `root` issued: `cross.pem` when it
    /// certifies `root`'s key and is valid at `now`.
    public func crossCertificates(for root: Certificate, now: Date = Date()) -> [Certificate] {
        guard let bytes = try? SecureFile.read(crossCertificatePath, what: "the cross-certificate"),
              let cross = try? Certificate.all(from: bytes).first,
              cross.spkiDER == root.spkiDER, cross.notBefore <= now, now <= cross.notAfter else { return [] }
        return [cross]
    }

    /// Every root this CA has had (from the ledger), the current one included, oldest first.
    public func allRoots() throws -> [Certificate] {
        var roots = try ledgerRoots()
        let current = try rootCertificate()
        if !roots.contains(current) { roots.append(current) }
        return roots
    }

    /// Roots being retired: those that signed a cross-certificate of the current root that is
    /// still valid. Apps that pin only these break once devices trust the new root.
    public func retiringRoots(now: Date = Date()) throws -> [Certificate] {
        let root = try rootCertificate()
        let crosses = crossCertificates(for: root, now: now)
        return try allRoots().filter { candidate in
            candidate != root && crosses.contains { $0.isIssued(by: candidate) }
        }
    }

    /// The roots the ledger records (`ca init`, `ca rotate`), oldest first.
    func ledgerRoots() throws -> [Certificate] {
        try ledger.read().records.filter { $0.type == .root }.compactMap(\.storedCertificate)
    }

    /// Every cross-certificate in the ledger.
    func ledgerCrossCertificates() throws -> [Certificate] {
        try ledger.read().records.filter { $0.type == .crossCertificate }.compactMap(\.storedCertificate)
    }

    /// `Acme Root` → `Acme Root G2`; `Acme Root G2` → `Acme Root G3`.
    static func nextGenerationName(_ name: String) -> String {
        if let range = name.range(of: #" G(\d+)$"#, options: .regularExpression),
           let number = Int(name[range].dropFirst(2)) {
            return String(name[..<range.lowerBound]) + " G\(number + 1)"
        }
        return String(name.prefix(61)) + " G2"
    }

    private static func organizationalUnit(_ certificate: Certificate) -> String? {
        certificate.subject.components(separatedBy: ", ").first { $0.hasPrefix("OU = ") }
            .map { String($0.dropFirst(5)) }
    }
}
