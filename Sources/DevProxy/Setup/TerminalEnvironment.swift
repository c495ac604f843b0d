/// The environment variables that point a terminal's tools at DevProxy and make them trust its
/// root, as HTTP Toolkit's "intercept a fresh terminal" and Proxyman's "automatic terminal
/// setup" do: `devproxy env` prints them for a shell to evaluate, `devproxy exec` runs a command
/// with them.
///
/// Most CA variables *replace* a tool's list of trusted CAs (`SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`,
/// `CURL_CA_BUNDLE`, `GIT_SSL_CAINFO`, `PIP_CERT`, `AWS_CA_BUNDLE`, `CARGO_HTTP_CAINFO`,
/// `GRPC_DEFAULT_SSL_ROOTS_FILE_PATH`), so they name a bundle of the system's CAs plus the
/// team root (`TerminalTrust`): a host DevProxy passes through still verifies. `NODE_EXTRA_CA_CERTS`
/// and `DENO_CERT` add to the built-in list, and take the same file.
public struct TerminalEnvironment: Sendable {
    /// One variable: set to `value`, or removed when `value` is nil.
    public struct Variable: Sendable, Equatable {
        public let name: String
        public let value: String?

        public init(_ name: String, _ value: String?) {
            self.name = name
            self.value = value
        }
    }

    /// Where the proxy listens.
    public let proxy: ProxyAddress
    /// The PEM bundle of the system's CAs and the root.
    public let caBundle: String
    /// A PKCS12 keystore of the JDK's CAs and the root (password `javaTrustStorePassword`), or
    /// nil when there is no JDK: Java then gets no variable at all.
    public let javaTrustStore: String?
    /// Loopback destinations go through the proxy too (no `NO_PROXY` for them).
    public let interceptLoopback: Bool

    public init(proxy: ProxyAddress, caBundle: String, javaTrustStore: String?, interceptLoopback: Bool = false) {
        self.proxy = proxy
        self.caBundle = caBundle
        self.javaTrustStore = javaTrustStore
        self.interceptLoopback = interceptLoopback
    }

    /// The password of the keystore `TerminalTrust` writes: keytool's well-known default. It
    /// guards nothing (the keystore holds public certificates), and Java needs one to read the
    /// certificates of a PKCS12 store.
    public static let javaTrustStorePassword = "changeit"

    /// Both spellings: curl reads only the lowercase `http_proxy`, and the uppercase `HTTPS_PROXY`
    /// is what Go, Node's `NODE_USE_ENV_PROXY` and most documentation write. gRPC C-core reads
    /// `grpc_proxy` before `https_proxy`, so one left from elsewhere would take it past DevProxy.
    public static let proxyVariables = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "grpc_proxy"]
    public static let noProxyVariables = ["NO_PROXY", "no_proxy"]
    /// Each names the bundle: OpenSSL's default file (Python's ssl, urllib, httpx, Ruby, Go,
    /// rustls-native-certs, curl), Python requests, curl, Node.js (added to its own), git, pip,
    /// the AWS CLI and SDKs, Cargo, gRPC C-core (grpcio, grpc-js), Deno (added to its own).
    public static let caVariables = [
        "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO", "PIP_CERT",
        "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH", "DENO_CERT",
    ]
    /// Node.js 24 (fetch; http and https from 24.5) reads the proxy variables only with this set.
    public static let nodeProxyVariable = "NODE_USE_ENV_PROXY"
    public static let javaVariable = "JAVA_TOOL_OPTIONS"
    /// The loopback names `NO_PROXY` lists: what Go's and Java's clients and Chromium leave
    /// unproxied on their own. No CIDR (`127.0.0.0/8`): curl before 7.86 and httpx cannot read it.
    public static let loopback = ["localhost", "127.0.0.1", "::1"]

    /// Every variable this sets, in the order it is printed.
    public static var allNames: [String] {
        proxyVariables + noProxyVariables + caVariables + [nodeProxyVariable, javaVariable]
    }

    /// The variables to set (or remove) in an environment that is now `current`: `NO_PROXY` keeps
    /// the hosts `current` already listed, and `JAVA_TOOL_OPTIONS` the options it already had
    /// but the ones this sets, so evaluating the lines twice changes nothing the second time.
    ///
    /// With `trustOnly` (`devproxy exec --transparent`, whose namespace captures every connection
    /// anyway), only what makes programs trust the root: the proxy variables, `NO_PROXY` and
    /// `NODE_USE_ENV_PROXY` are removed and Java gets no proxy property, so a program that looks
    /// for a proxy (and refuses to run, or goes another way, when it sees one) finds none, as under
    /// mitmproxy's local mode; one left from the calling shell would have sent its connections to
    /// another proxy, around DevProxy's interception.
    public func variables(current: [String: String], trustOnly: Bool = false) -> [Variable] {
        let url = trustOnly ? nil : proxy.url
        var result = Self.proxyVariables.map { Variable($0, url) }
        let noProxy = trustOnly ? nil : Self.mergedNoProxy(current: current, loopback: !interceptLoopback)
        result += Self.noProxyVariables.map { Variable($0, noProxy) }
        result += Self.caVariables.map { Variable($0, caBundle) }
        result.append(Variable(Self.nodeProxyVariable, trustOnly ? nil : "1"))
        if let javaTrustStore {
            let proxyOptions = trustOnly ? [] : [
                "-Dhttp.proxyHost=\(proxy.host)", "-Dhttp.proxyPort=\(proxy.port)",
                "-Dhttps.proxyHost=\(proxy.host)", "-Dhttps.proxyPort=\(proxy.port)",
            ]
            let options = (proxyOptions + [
                "-Djavax.net.ssl.trustStore=\(javaTrustStore)", "-Djavax.net.ssl.trustStoreType=PKCS12",
                "-Djavax.net.ssl.trustStorePassword=\(Self.javaTrustStorePassword)",
            ]).map(JavaOptions.quoted)
            let kept = JavaOptions.words(current[Self.javaVariable] ?? "").filter { !JavaOptions.isOurs($0) }
            result.append(Variable(Self.javaVariable, (kept + options).joined(separator: " ")))
        }
        return result
    }

    /// The variables that undo `variables` (`devproxy env --unset`): each removed, but
    /// `JAVA_TOOL_OPTIONS`, which keeps the options that were not DevProxy's, and `NO_PROXY`,
    /// which keeps the hosts that were not loopback.
    public static func removal(current: [String: String]) -> [Variable] {
        var result = (proxyVariables + caVariables + [nodeProxyVariable]).map { Variable($0, nil) }
        let noProxy = mergedNoProxy(current: current, loopback: false)
        result += noProxyVariables.map { Variable($0, noProxy) }
        let kept = JavaOptions.words(current[javaVariable] ?? "").filter { !JavaOptions.isOurs($0) }
        result.append(Variable(javaVariable, kept.isEmpty ? nil : kept.joined(separator: " ")))
        return result
    }

    /// `NO_PROXY`: the loopback names (when `loopback`), then the entries `current` has that are
    /// not among them (a company's internal domains keep going direct), without `*`, which would
    /// send nothing through the proxy. Nil when that leaves nothing.
    static func mergedNoProxy(current: [String: String], loopback: Bool) -> String? {
        let existing = [current["no_proxy"], current["NO_PROXY"]].compactMap { $0 }
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var entries = loopback ? Self.loopback : []
        for entry in existing where !entry.isEmpty && entry != "*" && !Self.loopback.contains(entry) && !entries.contains(entry) {
            entries.append(entry)
        }
        return entries.isEmpty ? nil : entries.joined(separator: ",")
    }
}

/// `JAVA_TOOL_OPTIONS` as the JVM reads it: options split at white space, a run in `"` or `'`
/// kept whole (and its quotes dropped), as HotSpot's option parser does since JDK 9.
enum JavaOptions {
    /// The system properties `TerminalEnvironment` sets; an option setting one of them is replaced.
    static let properties = [
        "http.proxyHost", "http.proxyPort", "https.proxyHost", "https.proxyPort",
        "javax.net.ssl.trustStore", "javax.net.ssl.trustStoreType", "javax.net.ssl.trustStorePassword",
    ]

    /// Whether `word` (as written, quotes and all) sets one of `properties`.
    static func isOurs(_ word: String) -> Bool {
        let bare = word.filter { $0 != "\"" && $0 != "'" }
        return properties.contains { bare.hasPrefix("-D\($0)=") }
    }

    /// The options of `text`, each as written.
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        for character in text {
            if let open = quote {
                current.append(character)
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                current.append(character)
                quote = character
            } else if character.isWhitespace {
                if !current.isEmpty { words.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// `option` as one word the JVM reads back whole: bare when it has no white space or quote;
    /// else every run without `"` in double quotes and each `"` in single quotes, which the JVM
    /// joins (`-Dx="it's "'"'"here"`).
    static func quoted(_ option: String) -> String {
        guard option.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "'" }) else { return option }
        var result = ""
        var run = ""
        for character in option {
            if character == "\"" {
                if !run.isEmpty { result += "\"" + run + "\"" }
                run = ""
                result += "'\"'"
            } else {
                run.append(character)
            }
        }
        if !run.isEmpty { result += "\"" + run + "\"" }
        return result
    }
}
