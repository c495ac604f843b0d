import CertAuthority
import Foundation

/// The files of a store as they were before `install` changed them, so that `uninstall` can put
/// them back byte for byte, but only when nothing has changed them since.
///
/// Tools rewrite whole files: keytool reorders a JKS keystore's entries, SQLite bumps NSS's
/// change counters. Removing the entry with the tool restores the entries, not the bytes; this
/// restores the bytes when the files are exactly as `install` left them, and otherwise leaves
/// the tool to remove the entry.
///
/// Kept in `$XDG_STATE_HOME/devproxy/trust-backups` (else `~/.local/state/devproxy/…`), 0700,
/// one directory per store and root: the originals (0600; NSS's key4.db holds keys) and a
/// manifest of each file's SHA-256 after install.
struct TrustStoreBackup {
    /// The store's files, by absolute path; a file that does not exist is not backed up.
    let files: [String]
    /// This store's and root's backup directory.
    let directory: String

    /// - Parameters:
    ///   - files: the files `install` changes.
    ///   - nickname: the root's name in the store.
    ///   - environment: where `XDG_STATE_HOME` and `HOME` are read.
    init(files: [String], nickname: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.files = files
        let state = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? HomeDirectory.current(environment) + "/.local/state"
        let identity = Digest.sha256(Array(files.joined(separator: "\n").utf8)).hex.prefix(12)
        directory = state + "/devproxy/trust-backups/\(nickname)-\(identity)"
    }

    /// Copies the files before `install` changes them.
    /// Saves the copy, makes `change`, then seals the copy; a failed change discards it.
    func around(_ change: () throws -> Void) throws {
        try save()
        do {
            try change()
        } catch {
            discard()
            throw error
        }
        try seal()
    }

    func save() throws {
        discard()
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            for (index, file) in files.enumerated() {
                guard let bytes = FileManager.default.contents(atPath: file) else {
                    // Install creates it (a new Java keystore): restoring means removing it.
                    if !FileManager.default.fileExists(atPath: file) { try SecureFile.write([], to: absent(index), mode: 0o600) }
                    continue
                }
                try SecureFile.write([UInt8](bytes), to: original(index), mode: 0o600)
            }
        } catch let error as CAError {
            throw TrustStoreError(.fileError, "cannot keep a copy of the store in \(directory): \(error.reason)")
        } catch {
            throw TrustStoreError(.fileError, "cannot keep a copy of the store in \(directory): \(error.localizedDescription)")
        }
    }

    /// Records what `install` left, so a later change by anyone else is seen.
    func seal() throws {
        let manifest = files.map { digest(of: $0) ?? "-" }.joined(separator: "\n") + "\n"
        do {
            try SecureFile.write(Array(manifest.utf8), to: directory + "/manifest", mode: 0o600)
        } catch let error as CAError {
            throw TrustStoreError(.fileError, error.reason)
        }
    }

    /// Writes the originals back in place (same inode, mode and owner) when every file is as
    /// `install` left it, removing those install created, and forgets the copy either way.
    ///
    /// - Returns: true when the files were restored.
    func restoreIfUnchanged() throws -> Bool {
        defer { discard() }
        guard let manifest = try? String(contentsOfFile: directory + "/manifest", encoding: .utf8) else { return false }
        let sealed = manifest.split(separator: "\n").map(String.init)
        guard sealed.count == files.count, zip(files, sealed).allSatisfy({ digest(of: $0.0) ?? "-" == $0.1 }) else { return false }
        for (index, file) in files.enumerated() {
            if FileManager.default.fileExists(atPath: absent(index)) {
                guard unlink(file) == 0 || errno == ENOENT else {
                    throw TrustStoreError(.fileError, "cannot remove \(file), which install created: \(String(cString: strerror(errno)))")
                }
                continue
            }
            guard let bytes = FileManager.default.contents(atPath: original(index)) else { continue }
            guard let handle = FileHandle(forUpdatingAtPath: file) else {
                throw TrustStoreError(.fileError, "cannot write \(file) to restore it")
            }
            defer { try? handle.close() }
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
        }
        return true
    }

    /// Forgets the copy.
    func discard() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func original(_ index: Int) -> String { directory + "/\(index).orig" }

    /// The mark that file `index` did not exist before install.
    private func absent(_ index: Int) -> String { directory + "/\(index).absent" }

    private func digest(of file: String) -> String? {
        FileManager.default.contents(atPath: file).map { Digest.sha256([UInt8]($0)).hex }
    }
}
