import CertAuthority
import Foundation

/// The Linux system store, as each family lays it out: an anchor file in a directory the
/// distribution reads, then its tool to rebuild the bundle every OpenSSL, curl and Chromium
/// on the machine reads. Changing it needs root.
public struct SystemTrustStore: TrustStore {
    /// Where one distribution family keeps local anchors and how it rebuilds its bundle.
    public struct Layout: Sendable, Equatable {
        /// `Debian`, `Fedora/RHEL`, `Arch`.
        public let family: String
        /// The directory anchors go in.
        public let anchors: String
        /// The extension the tool requires of an anchor file (Debian reads only `*.crt`).
        public let fileExtension: String
        /// The rebuilt bundle, read to tell whether the root is trusted.
        public let bundle: String
        /// The tool, its arguments after adding an anchor, and after removing one.
        public let tool: String
        public let installArguments: [String]
        public let uninstallArguments: [String]

        /// Debian and Ubuntu: `update-ca-certificates`; `--fresh` on removal, since a plain run
        /// leaves the removed anchor's links in /etc/ssl/certs dangling.
        public static let debian = Layout(
            family: "Debian", anchors: "/usr/local/share/ca-certificates", fileExtension: "crt",
            bundle: "/etc/ssl/certs/ca-certificates.crt", tool: "update-ca-certificates",
            installArguments: [], uninstallArguments: ["--fresh"])

        /// Fedora, RHEL, CentOS: `update-ca-trust extract`.
        public static let fedora = Layout(
            family: "Fedora/RHEL", anchors: "/etc/pki/ca-trust/source/anchors", fileExtension: "pem",
            bundle: "/etc/pki/tls/certs/ca-bundle.crt", tool: "update-ca-trust",
            installArguments: ["extract"], uninstallArguments: ["extract"])

        /// Arch: p11-kit's anchors directory, then `trust extract-compat` (what `trust anchor`
        /// does, but with a file name we choose, so removal is exact).
        public static let arch = Layout(
            family: "Arch", anchors: "/etc/ca-certificates/trust-source/anchors", fileExtension: "crt",
            bundle: "/etc/ssl/certs/ca-certificates.crt", tool: "trust",
            installArguments: ["extract-compat"], uninstallArguments: ["extract-compat"])

        /// Every layout, in the order they are tried.
        public static let all: [Layout] = [.debian, .fedora, .arch]

        /// Every system CA bundle file known, in the order looked for: each layout's bundle, then
        /// the others Go's crypto/x509 looks for (openSUSE, OpenELEC, CentOS/RHEL 7, Alpine and
        /// macOS). `TerminalTrust` copies the first that exists into the terminal's bundle.
        public static let bundles: [String] = all.map(\.bundle).reduce(into: []) { known, bundle in
            if !known.contains(bundle) { known.append(bundle) }
        } + ["/etc/ssl/ca-bundle.pem", "/etc/pki/tls/cacert.pem", "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
             "/etc/ssl/cert.pem"]

        /// The first layout whose anchors directory exists and whose tool is installed.
        public static func detect() -> Layout? {
            all.first { layout in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: layout.anchors, isDirectory: &isDirectory)
                    && isDirectory.boolValue && ExternalTool(layout.tool).isInstalled
            }
        }
    }

    public let layout: Layout

    public init(layout: Layout) {
        self.layout = layout
    }

    public var description: String { "system store (\(layout.family): \(layout.anchors))" }

    public var unavailableReason: String? {
        ExternalTool(layout.tool).isInstalled ? nil : "\(layout.tool) is not installed"
    }

    public var privilegeProblem: String? {
        geteuid() == 0 ? nil : "changing the system store needs root"
    }

    /// The anchor file this root is installed as.
    public func anchorPath(for root: TrustRoot) -> String {
        layout.anchors + "/" + root.nickname + "." + layout.fileExtension
    }

    /// Anchor files holding the root (under any name), when the bundle holds it too.
    public func holders(of root: TrustRoot) throws -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: layout.anchors)) ?? []
        let anchors = files.sorted().map { layout.anchors + "/" + $0 }.filter { path in
            (try? String(contentsOfFile: path, encoding: .utf8)).map(root.isContained(inPEM:)) ?? false
        }
        guard let bundle = try? String(contentsOfFile: layout.bundle, encoding: .utf8) else { return [] }
        guard root.isContained(inPEM: bundle) else { return [] }
        return anchors.isEmpty ? [layout.bundle] : anchors
    }

    public func install(_ root: TrustRoot) throws -> TrustChange {
        let held = try holders(of: root)
        if !held.isEmpty { return TrustChange(changed: false, "already trusted (\(held.joined(separator: ", ")))") }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        let path = anchorPath(for: root)
        do {
            try SecureFile.write(Array(root.certificate.pem.utf8), to: path, mode: SecureFile.publicMode)
        } catch let error as CAError {
            throw TrustStoreError(.fileError, error.reason)
        }
        try ExternalTool(layout.tool).check(layout.installArguments)
        return TrustChange(changed: true, "added \(path) and ran \(([layout.tool] + layout.installArguments).joined(separator: " "))")
    }

    public func uninstall(_ root: TrustRoot) throws -> TrustChange {
        let path = anchorPath(for: root)
        guard FileManager.default.fileExists(atPath: path) else {
            return TrustChange(changed: false, nothingToRemove(try holders(of: root), expected: path))
        }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw TrustStoreError(.fileError, "cannot remove \(path): \(error.localizedDescription)")
        }
        try ExternalTool(layout.tool).check(layout.uninstallArguments)
        let left = try holders(of: root)
        let tail = left.isEmpty ? "" : "; still trusted through \(left.joined(separator: ", ")), which devproxy did not add"
        return TrustChange(changed: true, "removed \(path) and ran \(([layout.tool] + layout.uninstallArguments).joined(separator: " "))\(tail)")
    }
}

/// The sentence for an uninstall that finds nothing of its own to remove.
func nothingToRemove(_ holders: [String], expected: String) -> String {
    holders.isEmpty ? "not installed (no \(expected))"
        : "not installed by devproxy (no \(expected)), but trusted through \(holders.joined(separator: ", ")); left as it is"
}
