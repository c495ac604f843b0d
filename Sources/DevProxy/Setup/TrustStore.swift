import CertAuthority
import Foundation

/// A place a machine keeps the roots it trusts: the system store, an NSS database, a Java
/// keystore, the macOS keychain. `devproxy trust` installs the team root into stores, removes it,
/// and says which hold it.
///
/// Install and uninstall are exact and idempotent: a store keeps the root under
/// `TrustRoot.nickname`, installing twice changes nothing, and uninstalling removes that entry
/// alone. Whether a store holds the root is decided by fingerprint, not by name.
public protocol TrustStore: Sendable {
    /// What and where, for a person: `system store (Debian: /usr/local/share/ca-certificates)`.
    var description: String { get }
    /// Why the store cannot be used here (its tool is missing, say), or nil when it can.
    var unavailableReason: String? { get }
    /// Why this user cannot change the store (`changing the system store needs root`), or nil
    /// when it can; the CLI adds the `sudo` command line.
    var privilegeProblem: String? { get }
    /// Where the store holds `root`, one entry per name or file; empty when it does not.
    func holders(of root: TrustRoot) throws -> [String]
    /// Adds `root` unless the store already holds it.
    func install(_ root: TrustRoot) throws -> TrustChange
    /// Removes the entry `install` added; an entry under another name is left and reported.
    func uninstall(_ root: TrustRoot) throws -> TrustChange
}

/// What one install or uninstall did to one store.
public struct TrustChange: Sendable, Equatable {
    /// Whether the store changed.
    public let changed: Bool
    /// One sentence: what was added or removed, where; or why nothing was.
    public let summary: String

    public init(changed: Bool, _ summary: String) {
        self.changed = changed
        self.summary = summary
    }
}

/// The root being trusted, and the name every store keeps it under.
public struct TrustRoot: Sendable {
    public let certificate: Certificate
    /// SHA-256 of the DER.
    public let fingerprint: [UInt8]

    public init(certificate: Certificate) {
        self.certificate = certificate
        fingerprint = Digest.sha256(certificate.der)
    }

    /// `devproxy-` and the first 8 hex digits of the SHA-256 fingerprint: unique per root, so
    /// two roots (before and after a rotation) never overwrite each other.
    public var nickname: String { "devproxy-" + String(fingerprint.hex.prefix(8)) }

    /// The subject's common name, else the nickname: for messages.
    public var displayName: String { certificate.commonName ?? nickname }

    /// Whether `pem` (one certificate or a bundle) holds this root.
    public func isContained(inPEM pem: String) -> Bool {
        PEMBlock.all(in: pem).contains { block in
            (block.label == "CERTIFICATE" || block.label == "TRUSTED CERTIFICATE") && block.der.map(Digest.sha256) == fingerprint
        }
    }

    /// Writes the root as PEM to a private temporary file for a tool that reads a file, runs
    /// `body` with its path and removes the file.
    public func withPEMFile<R>(_ body: (String) throws -> R) throws -> R {
        let directory = NSTemporaryDirectory() + "devproxy-trust-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + nickname + ".pem"
        try SecureFile.write(Array(certificate.pem.utf8), to: path, mode: SecureFile.publicMode)
        return try body(path)
    }
}
