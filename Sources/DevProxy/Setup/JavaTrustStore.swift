import Foundation

/// A Java keystore, `cacerts` by default, driven with `keytool`: the root goes in as a
/// trusted-certificate entry aliased `TrustRoot.nickname`.
///
/// The store password is `changeit` (the JDK's well-known default, not a secret) unless
/// `$DEVPROXY_JAVA_STOREPASS` says otherwise; it reaches keytool through the environment
/// (`-storepass:env`), never argv.
///
/// A keystore that does not exist yet is created by `install`, as `keytool -importcert` would
/// (PKCS12, the JDK's default type since 9), but 0600: it is the app's trust decision.
public struct JavaTrustStore: TrustStore {
    /// The keystore file.
    public let keystore: String
    /// The `keytool` to run: `$JAVA_HOME/bin/keytool` when there is one, else from PATH.
    private let keytool: ExternalTool
    private let password: String
    /// Whether the password is `$DEVPROXY_JAVA_STOREPASS`'s rather than the default.
    private let passwordFromEnvironment: Bool
    /// For the description while the keystore is missing, when it was missing already when this
    /// value was made (so not after an uninstall removed it) and install can create it.
    private let creationNote: String

    public init(keystore: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.keystore = keystore
        keytool = Self.keytool(environment: environment)
        password = environment["DEVPROXY_JAVA_STOREPASS"] ?? "changeit"
        passwordFromEnvironment = environment["DEVPROXY_JAVA_STOREPASS"] != nil
        var isDirectory: ObjCBool = false
        let creatable = !FileManager.default.fileExists(atPath: keystore)
            && FileManager.default.fileExists(atPath: Self.directory(of: keystore), isDirectory: &isDirectory) && isDirectory.boolValue
        creationNote = creatable ? " (does not exist yet; `devproxy trust install` creates it)" : ""
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
        return cacerts(underAnyOf: homes)
    }

    /// The `cacerts` of the first of the Java homes `homes` that has one: JDK 9 and later keep it
    /// in `lib/security`, JDK 8 in `jre/lib/security`. Nil when none has.
    static func cacerts(underAnyOf homes: [String]) -> String? {
        homes.flatMap { [$0 + "/lib/security/cacerts", $0 + "/jre/lib/security/cacerts"] }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The `keytool` to run, for this store and `TerminalTrust`'s: `$JAVA_HOME/bin/keytool` when
    /// there is one, else keytool from PATH.
    static func keytool(environment: [String: String]) -> ExternalTool {
        if let home = environment["JAVA_HOME"], FileManager.default.isExecutableFile(atPath: home + "/bin/keytool") {
            return ExternalTool(home + "/bin/keytool")
        }
        return ExternalTool("keytool")
    }

    public var description: String {
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: keystore)).map { " → \($0)" } ?? ""
        return "Java keystore \(keystore)\(resolved)\(exists ? "" : creationNote)"
    }

    public var unavailableReason: String? {
        guard keytool.isInstalled else { return "keytool is not installed (it comes with a JDK or JRE)" }
        guard !exists else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            return "the directory \(directory) does not exist; create it first"
        }
        return nil
    }

    public var privilegeProblem: String? {
        // A keystore still to be created needs its directory writable, as keytool would.
        let target = exists ? keystore : directory
        return access(target, W_OK) == 0 ? nil : "this user cannot write to \(target)"
    }

    /// Whether the keystore file (or what its link leads to) is there.
    private var exists: Bool { FileManager.default.fileExists(atPath: keystore) }

    /// The directory the keystore is, or is to be, in.
    private var directory: String { Self.directory(of: keystore) }

    private static func directory(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }

    /// Aliases whose certificate is the root; none in a keystore not created yet.
    public func holders(of root: TrustRoot) throws -> [String] {
        guard exists else { return [] }
        return try entries().filter { root.isContained(inPEM: $0.pem) }.map(\.alias)
    }

    public func install(_ root: TrustRoot) throws -> TrustChange {
        let held = try holders(of: root)
        if !held.isEmpty { return TrustChange(changed: false, "already trusted as \(held.joined(separator: ", "))") }
        if let privilegeProblem { throw TrustStoreError(.needsPrivileges, privilegeProblem) }
        let creating = !exists
        try backup(for: root).around {
            try root.withPEMFile { path in
                if creating {
                    try create(importing: path, alias: root.nickname)
                } else {
                    _ = try run(["-importcert", "-noprompt", "-alias", root.nickname, "-file", path])
                }
            }
        }
        guard creating else { return TrustChange(changed: true, "added alias \(root.nickname)") }
        let source = passwordFromEnvironment ? "store password from $DEVPROXY_JAVA_STOREPASS"
            : "store password changeit, the default; set $DEVPROXY_JAVA_STOREPASS for another"
        // The property is read against the Java program's working directory, not this one's: a
        // relative path (`./truststore.p12`) found nothing anywhere else.
        let absolute = URL(fileURLWithPath: keystore).standardizedFileURL.path
        return TrustChange(changed: true, "created \(keystore) (PKCS12, 0600, \(source)) and added alias \(root.nickname); "
                           + "Java programs read it with -Djavax.net.ssl.trustStore=\(absolute)")
    }

    /// Creates the keystore holding the certificate in `pemFile`: keytool writes it in a private
    /// directory beside the target, it is made 0600 there, then linked into place, so no other
    /// user can open it in between and a file that appeared meanwhile is never replaced.
    private func create(importing pemFile: String, alias: String) throws {
        let work = directory + "/.devproxy-keystore-" + UUID().uuidString
        guard mkdir(work, 0o700) == 0 else {
            throw TrustStoreError(.fileError, "cannot create \(keystore): \(String(cString: strerror(errno)))")
        }
        defer { try? FileManager.default.removeItem(atPath: work) }
        let made = work + "/keystore.p12"
        _ = try run(["-importcert", "-noprompt", "-alias", alias, "-file", pemFile, "-storetype", "PKCS12"], keystore: made)
        guard chmod(made, 0o600) == 0, link(made, keystore) == 0 else {
            let reason = errno == EEXIST ? "it appeared while devproxy was creating it; run the command again"
                : String(cString: strerror(errno))
            throw TrustStoreError(.fileError, "cannot create \(keystore): \(reason)")
        }
    }

    public func uninstall(_ root: TrustRoot) throws -> TrustChange {
        guard exists else { return TrustChange(changed: false, "\(keystore) does not exist; nothing to remove") }
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
        guard exists else {
            // The backup recorded no keystore before install: restoring it removed the file.
            return TrustChange(changed: true, "removed alias \(root.nickname) and \(keystore), which install created "
                               + "(nothing else was added to it since)")
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
    private func run(_ arguments: [String], keystore: String? = nil) throws -> ExternalTool.Outcome {
        let keystore = keystore ?? self.keystore
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
