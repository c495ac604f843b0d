import CertAuthority
import Foundation

/// The macOS System keychain, driven with `security`: `add-trusted-cert -d` puts the root in
/// with admin trust settings for SSL, `remove-trusted-cert -d` and `delete-certificate -Z`
/// take both out. Changing it needs root.
///
/// Built everywhere, since it only runs `security`; tested where a Mac is available.
public struct MacKeychainTrustStore: TrustStore {
    /// `/Library/Keychains/System.keychain`.
    public let keychain: String

    public init(keychain: String = "/Library/Keychains/System.keychain") {
        self.keychain = keychain
    }

    public var description: String { "macOS keychain \(keychain)" }

    public var unavailableReason: String? {
        ExternalTool("/usr/bin/security").isInstalled ? nil : "/usr/bin/security is missing (not macOS?)"
    }

    public var privilegeProblem: String? {
        geteuid() == 0 ? nil : "changing the System keychain needs root"
    }

    /// The keychain when one of its certificates is the root (names are not unique there).
    public func holders(of root: TrustRoot) throws -> [String] {
        let all = try security.check(["find-certificate", "-a", "-p", keychain])
        return root.isContained(inPEM: all.output) ? ["\(keychain) (\(root.displayName))"] : []
    }

    public func install(_ root: TrustRoot) throws -> TrustChange {
        let held = try holders(of: root)
        if !held.isEmpty { return TrustChange(changed: false, "already trusted (\(held.joined(separator: ", ")))") }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        try root.withPEMFile { path in
            _ = try security.check(["add-trusted-cert", "-d", "-k", keychain, path])
        }
        return TrustChange(changed: true, "added \(root.displayName) to \(keychain), trusted for SSL")
    }

    public func uninstall(_ root: TrustRoot) throws -> TrustChange {
        guard !(try holders(of: root)).isEmpty else {
            return TrustChange(changed: false, "not installed (\(root.displayName) is not in \(keychain))")
        }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        try root.withPEMFile { path in
            _ = try security.check(["remove-trusted-cert", "-d", path])
        }
        let sha1 = Digest.sha1(root.certificate.der).hex.uppercased()
        try security.check(["delete-certificate", "-Z", sha1, keychain])
        return TrustChange(changed: true, "removed \(root.displayName) and its trust settings from \(keychain)")
    }

    private var security: ExternalTool { ExternalTool("/usr/bin/security") }
}
