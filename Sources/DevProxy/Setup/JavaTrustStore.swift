import Foundation

/// A Java keystore, `cacerts` by default, driven with `keytool`: the root goes in as a
/// trusted-certificate entry aliased `TrustRoot.nickname`.
///
/// The store password is `changeit` (the JDK's well-known default, not a secret) unless
/// `$DEVPROXY_JAVA_STOREPASS` says otherwise; it reaches keytool through the environment
/// (`-storepass:env`), never argv.
public struct JavaTrustStore: TrustStore {
    /// The keystore file.
    public let keystore: String
    /// The `keytool` to run: `$JAVA_HOME/bin/keytool` when there is one, else from PATH.
    private let keytool: ExternalTool
    private let password: String

    public init(keystore: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.keystore = keystore
        let bundled = environment["JAVA_HOME"].map { $0 + "/bin/keytool" }
        keytool = ExternalTool(bundled.flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil } ?? "keytool")
        password = environment["DEVPROXY_JAVA_STOREPASS"] ?? "changeit"
    }

    /// The JDK's `cacerts`: under `$JAVA_HOME`, else under the `java.home` of the `java` on PATH;
    /// nil when there is no Java.
    public static func defaultKeystore(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var homes: [String] = []
        if let home = environment["JAVA_HOME"], !home.isEmpty { homes.append(home) }
        if let outcome = try? ExternalTool("java").run(["-XshowSettings:properties", "-version"]) {
            for line in outcome.output.split(separator: "\n") {
                let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, parts[0] == "java.home" { homes.append(parts[1]) }
            }
        }
        // JDK 9 and later keep cacerts in lib/security; JDK 8 in jre/lib/security.
        let candidates = homes.flatMap { [$0 + "/lib/security/cacerts", $0 + "/jre/lib/security/cacerts"] }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    public var description: String {
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: keystore)).map { " → \($0)" } ?? ""
        return "Java keystore \(keystore)\(resolved)"
    }

    public var unavailableReason: String? {
        guard keytool.isInstalled else { return "keytool is not installed (it comes with a JDK or JRE)" }
        return FileManager.default.fileExists(atPath: keystore) ? nil : "\(keystore) does not exist"
    }

    public var privilegeProblem: String? {
        access(keystore, W_OK) == 0 ? nil : "this user cannot write to \(keystore)"
    }

    /// Aliases whose certificate is the root.
    public func holders(of root: TrustRoot) throws -> [String] {
        try entries().filter { root.isContained(inPEM: $0.pem) }.map(\.alias)
    }

    public func install(_ root: TrustRoot) throws -> TrustChange {
        let held = try holders(of: root)
        if !held.isEmpty { return TrustChange(changed: false, "already trusted as \(held.joined(separator: ", "))") }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        try backup(for: root).around {
            try root.withPEMFile { path in
                _ = try run(["-importcert", "-noprompt", "-alias", root.nickname, "-file", path])
            }
        }
        return TrustChange(changed: true, "added alias \(root.nickname)")
    }

    public func uninstall(_ root: TrustRoot) throws -> TrustChange {
        guard try entries().contains(where: { $0.alias == root.nickname }) else {
            return TrustChange(changed: false, nothingToRemove(try holders(of: root), expected: "alias \(root.nickname)"))
        }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        let how: String
        if try backup(for: root).restoreIfUnchanged() {
            how = "the keystore is byte for byte as it was before install"
        } else {
            // Changed since install: keytool rewrites the file, so the entries come back, not the bytes.
            try run(["-delete", "-alias", root.nickname])
            how = "with keytool -delete, as the keystore changed after install"
        }
        let left = try holders(of: root)
        let tail = left.isEmpty ? "" : "; still trusted as \(left.joined(separator: ", ")), which devproxy did not add"
        return TrustChange(changed: true, "removed alias \(root.nickname) (\(how))\(tail)")
    }

    /// The copy `install` takes, keyed by the keystore's real path.
    private func backup(for root: TrustRoot) -> TrustStoreBackup {
        TrustStoreBackup(files: [URL(fileURLWithPath: keystore).resolvingSymlinksInPath().path], nickname: root.nickname)
    }

    // MARK: - keytool

    /// One entry of `keytool -list -rfc`.
    struct Entry: Equatable {
        let alias: String
        let pem: String
    }

    func entries() throws -> [Entry] {
        Self.parseList(try run(["-list", "-rfc"]).output)
    }

    /// Parses `keytool -list -rfc`: `Alias name: X` lines, each followed by its PEM certificate(s).
    static func parseList(_ output: String) -> [Entry] {
        var entries: [Entry] = []
        var alias: String?
        var pem = ""
        func flush() {
            if let alias { entries.append(Entry(alias: alias, pem: pem)) }
            pem = ""
        }
        for line in output.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("Alias name: ") {
                flush()
                alias = String(line.dropFirst("Alias name: ".count)).trimmingCharacters(in: .whitespaces)
            } else if alias != nil {
                pem += line + "\n"
            }
        }
        flush()
        return entries
    }

    @discardableResult
    private func run(_ arguments: [String]) throws -> ExternalTool.Outcome {
        do {
            return try keytool.check(arguments + ["-keystore", keystore, "-storepass:env", "DEVPROXY_JAVA_STOREPASS"],
                                     environment: ["DEVPROXY_JAVA_STOREPASS": password])
        } catch let error as TrustStoreError where error.reason.contains("password was incorrect") {
            // keytool's own words named no way to give the right one.
            throw TrustStoreError(.toolFailed, "\(keystore) refused the keystore password: set DEVPROXY_JAVA_STOREPASS to "
                                  + "its password (the JDK's cacerts uses changeit, the default)")
        }
    }
}
