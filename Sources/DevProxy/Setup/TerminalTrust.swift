import CTLS
import CertAuthority
import Foundation

/// The files `TerminalEnvironment` points tools at, under `DIR/terminal/` of the CA directory:
/// `ca-bundle.pem`, the system's CAs followed by the root, and `truststore.p12`, the JDK's CAs
/// and the root for Java. Both are certificates only (0644), never a key.
///
/// Tools that read a CA file *replace* their list with it, so the system's CAs are in it: a
/// host DevProxy passes through (`--passthrough`, outside an intermediate's name constraints)
/// still verifies. Each file is written again when what it is made of changes (the root after a
/// rotation, the system bundle after `update-ca-certificates`), and left alone otherwise.
public struct TerminalTrust: Sendable {
    /// `DIR/terminal`.
    public let directory: String

    public init(caDirectory: String) {
        directory = caDirectory + "/terminal"
    }

    public var bundlePath: String { directory + "/ca-bundle.pem" }
    public var javaTrustStorePath: String { directory + "/truststore.p12" }
    /// The SHA-256 of what `truststore.p12` was made from (the JDK's cacerts and the root).
    var javaSourcePath: String { directory + "/truststore.p12.source" }

    /// The first line of every bundle written here: a bundle found in `SSL_CERT_FILE` that
    /// starts with it is one of ours (a terminal that evaluated `devproxy env` before), not the
    /// system's.
    static let marker = "# DevProxy terminal CA bundle"

    /// What `prepare` made.
    public struct Prepared: Sendable {
        /// The PEM bundle.
        public let bundle: String
        /// The system bundle it holds, nil when none was found (then it holds the root alone).
        public let systemBundle: String?
        /// How many certificates came from the system bundle.
        public let systemCount: Int
        /// The Java keystore, nil when there is no JDK (or keytool failed: `javaProblem` says why).
        public let javaTrustStore: String?
        public let javaProblem: String?
        /// Whether either file was written by this call (it was new, or out of date).
        public let wrote: Bool
    }

    /// Writes the bundle (and, when a JDK is found, the keystore) for `root` if they are missing
    /// or out of date.
    ///
    /// - Parameter java: make the Java keystore (a JVM start or two, the first time).
    /// - Throws: `TrustStoreError(.fileError)` when the directory or the bundle cannot be written,
    ///   or the system bundle is there but cannot be read.
    public func prepare(root: Certificate, environment: [String: String] = ProcessInfo.processInfo.environment,
                        java: Bool = true) throws -> Prepared {
        do {
            try SecureFile.makePrivateDirectory(directory)
        } catch let error as CAError {
            throw TrustStoreError(.fileError, "cannot create \(directory): \(error.reason)")
        }
        let system = Self.systemBundle(environment: environment)
        var systemPEM = ""
        var systemCount = 0
        if let system {
            do {
                let bytes = try SecureFile.read(system, what: "the system CA bundle")
                systemPEM = String(decoding: bytes, as: UTF8.self)
                systemCount = (try? Certificate.all(from: bytes).count) ?? 0
            } catch let error as CAError {
                throw TrustStoreError(.fileError, "cannot read the system CA bundle: \(error.reason)")
            }
        }
        let trustRoot = TrustRoot(certificate: root)
        var text = "\(Self.marker): the system's CAs (\(system ?? "none found")) and the root \(trustRoot.displayName) "
            + "(\(trustRoot.nickname)), made by `devproxy env`; written again when either changes.\n"
        if !systemPEM.isEmpty { text += systemPEM + (systemPEM.hasSuffix("\n") ? "" : "\n") }
        if !trustRoot.isContained(inPEM: systemPEM) {
            text += "# \(root.subject)\n" + root.pem + (root.pem.hasSuffix("\n") ? "" : "\n")
        }
        let bytes = Array(text.utf8)
        var wrote = false
        if (try? SecureFile.read(bundlePath, what: "the bundle")) != bytes {
            do {
                try SecureFile.write(bytes, to: bundlePath, mode: SecureFile.publicMode)
            } catch let error as CAError {
                throw TrustStoreError(.fileError, "cannot write \(bundlePath): \(error.reason)")
            }
            wrote = true
        }
        var javaStore: String?
        var javaProblem: String?
        if java, let cacerts = Self.javaCacerts(environment: environment) {
            do {
                wrote = try prepareJava(root: trustRoot, cacerts: cacerts, environment: environment) || wrote
                javaStore = javaTrustStorePath
            } catch let error as TrustStoreError {
                javaProblem = error.reason
            }
        }
        return Prepared(bundle: bundlePath, systemBundle: system, systemCount: systemCount, javaTrustStore: javaStore,
                        javaProblem: javaProblem, wrote: wrote)
    }

    /// Makes `truststore.p12` from the JDK's `cacerts` and the root when what it was made from
    /// changed: keytool copies cacerts into a new PKCS12 store, then adds the root. Written in a
    /// private directory beside it and renamed into place, so a JVM never reads half of one.
    /// - Returns: whether it was written.
    private func prepareJava(root: TrustRoot, cacerts: String, environment: [String: String]) throws -> Bool {
        let source: [UInt8]
        do {
            source = try SecureFile.read(cacerts, what: "the JDK's cacerts")
        } catch let error as CAError {
            throw TrustStoreError(.fileError, error.reason)
        }
        let stamp = Digest.sha256(source + root.certificate.der).hex + "\n"
        if FileManager.default.fileExists(atPath: javaTrustStorePath),
           (try? SecureFile.read(javaSourcePath, what: "the stamp")) == Array(stamp.utf8) {
            return false
        }
        let keytool = JavaTrustStore.keytool(environment: environment)
        guard keytool.isInstalled else { throw TrustStoreError(.toolMissing, "keytool is not installed") }
        let work = directory + "/.truststore-" + UUID().uuidString
        guard mkdir(work, 0o700) == 0 else {
            throw TrustStoreError(.fileError, "cannot create \(work): \(String(cString: strerror(errno)))")
        }
        defer { try? FileManager.default.removeItem(atPath: work) }
        let made = work + "/truststore.p12"
        let pemFile = work + "/root.pem"
        do {
            try SecureFile.write(Array(root.certificate.pem.utf8), to: pemFile, mode: SecureFile.publicMode)
        } catch let error as CAError {
            throw TrustStoreError(.fileError, error.reason)
        }
        // Both passwords travel through the environment (`:env`), never argv.
        let passwords = ["DEVPROXY_SOURCE_STOREPASS": environment["DEVPROXY_JAVA_STOREPASS"] ?? "changeit",
                         "DEVPROXY_TERMINAL_STOREPASS": TerminalEnvironment.javaTrustStorePassword]
        try keytool.check(["-importkeystore", "-noprompt", "-srckeystore", cacerts, "-srcstorepass:env", "DEVPROXY_SOURCE_STOREPASS",
                           "-destkeystore", made, "-deststoretype", "PKCS12", "-deststorepass:env", "DEVPROXY_TERMINAL_STOREPASS"],
                          environment: passwords)
        try keytool.check(["-importcert", "-noprompt", "-alias", root.nickname, "-file", pemFile, "-keystore", made,
                           "-storepass:env", "DEVPROXY_TERMINAL_STOREPASS"], environment: passwords)
        guard chmod(made, 0o644) == 0, rename(made, javaTrustStorePath) == 0 else {
            throw TrustStoreError(.fileError, "cannot write \(javaTrustStorePath): \(String(cString: strerror(errno)))")
        }
        try? SecureFile.write(Array(stamp.utf8), to: javaSourcePath, mode: SecureFile.publicMode)
        return true
    }

    /// The system's CA bundle: `$SSL_CERT_FILE` when it names one that is not a bundle of ours,
    /// else OpenSSL's default file, else the first of the system store's known bundles that exists
    /// (`SystemTrustStore.Layout.bundles`: Debian, Fedora/RHEL, openSUSE, Alpine, macOS). Nil when
    /// there is none.
    public static func systemBundle(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var candidates: [String] = []
        if let given = environment["SSL_CERT_FILE"], !given.isEmpty, !isOurs(given) { candidates.append(given) }
        candidates.append(String(cString: X509_get_default_cert_file()))
        candidates += SystemTrustStore.Layout.bundles
        return candidates.first { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
    }

    /// Whether the file at `path` is a bundle this type wrote.
    static func isOurs(_ path: String) -> Bool {
        guard let head = try? SecureFile.head(of: path, count: marker.utf8.count) else { return false }
        return head == Array(marker.utf8)
    }

    /// The JDK's `cacerts`: under `$JAVA_HOME`, else under the JDK the `java` on PATH belongs to
    /// (its link followed: /usr/bin/java → /usr/lib/jvm/…/bin/java); nil when there is no Java.
    /// No JVM is started to find it.
    public static func javaCacerts(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var homes: [String] = []
        if let home = environment["JAVA_HOME"], !home.isEmpty { homes.append(home) }
        if let java = ExternalTool("java").location(environment: environment) {
            let real = URL(fileURLWithPath: java).resolvingSymlinksInPath()
            homes.append(real.deletingLastPathComponent().deletingLastPathComponent().path)
        }
        return JavaTrustStore.cacerts(underAnyOf: homes)
    }
}
