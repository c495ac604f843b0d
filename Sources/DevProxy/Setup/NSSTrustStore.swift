import CertAuthority
import Foundation

/// An NSS certificate database, driven with `certutil` (Debian: libnss3-tools): Chromium's
/// `~/.pki/nssdb` on Linux and every Firefox profile. The root goes in with trust `C,,`
/// (a CA trusted to issue server certificates) under `TrustRoot.nickname`.
public struct NSSTrustStore: TrustStore {
    /// The database directory (holding cert9.db, or the legacy cert8.db).
    public let directory: String
    /// Who reads it: `Chromium`, `Firefox profile x.default-release`, or `--nss-db`.
    public let reader: String

    public init(directory: String, reader: String) {
        self.directory = directory
        self.reader = reader
    }

    /// The NSS databases of `home`: Chromium's (also as a snap) and each Firefox profile's (also
    /// as a snap, and on macOS), the ones that exist.
    public static func discover(home: String = HomeDirectory.current()) -> [NSSTrustStore] {
        var found: [NSSTrustStore] = []
        for (path, reader) in [(home + "/.pki/nssdb", "Chromium"), (home + "/snap/chromium/current/.pki/nssdb", "Chromium (snap)")] {
            if isDatabase(path) { found.append(NSSTrustStore(directory: path, reader: reader)) }
        }
        let profileRoots = [home + "/.mozilla/firefox", home + "/snap/firefox/common/.mozilla/firefox",
                            home + "/Library/Application Support/Firefox/Profiles"]
        for root in profileRoots {
            let profiles = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
            for profile in profiles where isDatabase(root + "/" + profile) {
                found.append(NSSTrustStore(directory: root + "/" + profile, reader: "Firefox profile \(profile)"))
            }
        }
        return found
    }

    /// Whether `directory` holds an NSS database.
    public static func isDatabase(_ directory: String) -> Bool {
        ["cert9.db", "cert8.db"].contains { FileManager.default.fileExists(atPath: directory + "/" + $0) }
    }

    public var description: String { "NSS database \(directory) (\(reader))" }

    public var unavailableReason: String? {
        guard certutil.isInstalled else {
            return "certutil is not installed (Debian/Ubuntu: apt install libnss3-tools; Fedora: dnf install nss-tools)"
        }
        return Self.isDatabase(directory) ? nil
            : "\(directory) holds no NSS database (create one: certutil -N -d sql:\(directory) --empty-password)"
    }

    public var privilegeProblem: String? {
        access(directory, W_OK) == 0 ? nil : "this user cannot write to \(directory)"
    }

    /// Nicknames whose certificate is the root and whose SSL trust includes `C`.
    public func holders(of root: TrustRoot) throws -> [String] {
        try entries().filter { $0.sslTrust.contains("C") }.map(\.nickname).filter { nickname in
            let exported = try certutil.check(["-L", "-d", database, "-n", nickname, "-a"])
            return root.isContained(inPEM: exported.output)
        }
    }

    public func install(_ root: TrustRoot) throws -> TrustChange {
        let held = try holders(of: root)
        if !held.isEmpty { return TrustChange(changed: false, "already trusted as \(held.joined(separator: ", "))") }
        // NSS keeps one nickname per certificate: adding the root where it is already, untrusted
        // (imported by hand without "trust this CA to identify websites"), changed that entry's
        // trust under its own name, and `uninstall` then left it trusted, saying no store held it.
        let present = try entries().filter { $0.nickname != root.nickname }.first { entry in
            root.isContained(inPEM: try certutil.check(["-L", "-d", database, "-n", entry.nickname, "-a"]).output)
        }
        if let present {
            throw TrustStoreError(.toolFailed, "the root is already in \(directory) as \(present.nickname), not trusted for "
                                  + "websites (trust \(present.sslTrust.isEmpty ? "none" : present.sslTrust)): trust it there yourself "
                                  + "(certutil -M -d \(database) -n \"\(present.nickname)\" -t C,,) or delete that entry, then install")
        }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        try backup(for: root).around {
            try root.withPEMFile { path in
                _ = try certutil.check(["-A", "-d", database, "-t", "C,,", "-n", root.nickname, "-i", path])
            }
        }
        return TrustChange(changed: true, "added \(root.nickname) with trust C,,")
    }

    public func uninstall(_ root: TrustRoot) throws -> TrustChange {
        guard try entries().contains(where: { $0.nickname == root.nickname }) else {
            return TrustChange(changed: false, nothingToRemove(try holders(of: root), expected: "entry \(root.nickname)"))
        }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        let how: String
        if try backup(for: root).restoreIfUnchanged() {
            how = "the database is byte for byte as it was before install"
        } else {
            // Changed since install (a browser wrote to it): SQLite's pages and counters move,
            // so certutil brings the entries back, not the bytes. It deletes one certificate of
            // the nickname at a time.
            while try entries().contains(where: { $0.nickname == root.nickname }) {
                try certutil.check(["-D", "-d", database, "-n", root.nickname])
            }
            how = "with certutil -D, as the database changed after install"
        }
        let left = try holders(of: root)
        let tail = left.isEmpty ? "" : "; still trusted as \(left.joined(separator: ", ")), which devproxy did not add"
        return TrustChange(changed: true, "removed \(root.nickname) (\(how))\(tail)")
    }

    /// The copy `install` takes: the database's files, current and legacy formats.
    private func backup(for root: TrustRoot) -> TrustStoreBackup {
        let files = FileManager.default.fileExists(atPath: directory + "/cert9.db")
            ? ["cert9.db", "key4.db", "pkcs11.txt"] : ["cert8.db", "key3.db", "secmod.db"]
        let absolute = URL(fileURLWithPath: directory).standardized.path
        return TrustStoreBackup(files: files.map { absolute + "/" + $0 }, nickname: root.nickname)
    }

    // MARK: - certutil

    private var certutil: ExternalTool { ExternalTool("certutil") }

    /// `sql:DIR` for the current format, `dbm:DIR` for a database with only cert8.db.
    private var database: String {
        FileManager.default.fileExists(atPath: directory + "/cert9.db") ? "sql:" + directory : "dbm:" + directory
    }

    /// One line of `certutil -L`.
    struct Entry: Equatable {
        let nickname: String
        /// The first of the three trust fields (`C`, `CT`, `P`, empty…).
        let sslTrust: String
    }

    /// The database's certificates by nickname, from `certutil -L`.
    func entries() throws -> [Entry] {
        Self.parseList(try certutil.check(["-L", "-d", database]).output)
    }

    /// Parses `certutil -L`: a heading, a `SSL,S/MIME,JAR/XPI` line, then one line per
    /// certificate, the nickname (which may hold spaces) before the trust attributes.
    static func parseList(_ output: String) -> [Entry] {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: true)
        guard let heading = lines.firstIndex(where: { $0.contains("SSL,S/MIME,JAR/XPI") }) else { return [] }
        return lines[(heading + 1)...].compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard let split = trimmed.lastIndex(where: { $0 == " " || $0 == "\t" }) else { return nil }
            let trust = String(trimmed[trimmed.index(after: split)...])
            guard trust.filter({ $0 == "," }).count == 2 else { return nil }
            let nickname = trimmed[..<split].trimmingCharacters(in: .whitespaces)
            return Entry(nickname: nickname, sslTrust: String(trust.split(separator: ",", omittingEmptySubsequences: false)[0]))
        }
    }
}
