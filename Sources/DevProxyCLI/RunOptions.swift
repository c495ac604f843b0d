import CertAuthority
import DevProxy
import Foundation
import GRPCWire

/// `devproxy run`'s settings: flags first, then the JSON config file (`--config`), then the
/// defaults in `ProxyConfiguration`. Config keys are the flag names with `_` for `-`; the file's
/// relative paths are read against its own directory (`ConfigFilePaths`), the flags' against the
/// working directory.
struct RunOptions {
    static let valued: Set<String> = ["listen", "ca-dir", "intermediate", "log", "har", "passthrough", "upstream-ca", "resolve",
                                      "keylog", "body-limit", "config", "proxy-auth", "persona", "report-uri", "redact",
                                      "passphrase-file", "reports", "mode", "session", "leaf-key", "web",
                                      "web-password-file", "store-body-limit", "client-cert", "client-cert-passphrase-file",
                                      "verify-signature", "pinset-rewrite", "upstream-proxy", "upstream-proxy-auth-file",
                                      "header-timeout", "idle-timeout", "connect-timeout", "upstream-timeout", "proto",
                                      "map-remote", "map-local", "modify-headers", "modify-body", "block-list",
                                      "intercept", "throttle", "throttle-hosts"]
    static let booleans: Set<String> = ["insecure-upstream", "lazy-upstream", "quiet", "allow-remote", "sink-reports",
                                        "sign-with-root", "via", "no-http2", "no-web", "qr", "reverse-tls",
                                        "keep-alt-svc", "grpc-reflection"]

    private let arguments: Arguments
    private let file: [String: Any]
    /// The config file's directory (`""`: the working directory).
    private let fileDirectory: String

    init(_ raw: ArraySlice<String>) throws {
        arguments = try Arguments(raw, valued: Self.valued, booleans: Self.booleans)
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument \(arguments.positionals[0]); see `devproxy run --help`")
        }
        guard let path = arguments.value("config") else {
            file = [:]
            fileDirectory = ""
            return
        }
        fileDirectory = PathName.directory(of: path)
        let object: [String: Any]
        do {
            object = try JSONDocument.object(try SecureFile.read(path, what: "the config file"))
        } catch let problem as JSONDocument.Problem {
            throw CommandFailure("\(path) is \(problem.reason)")
        }
        let known = Self.valued.union(Self.booleans).map { $0.replacingOccurrences(of: "-", with: "_") }
        if let unknown = object.keys.filter({ !$0.hasPrefix("_") && !known.contains($0) }).sorted().first {
            let hint = Arguments.configSuggestion(for: unknown, known: Self.valued.union(Self.booleans))
            throw CommandFailure("\(path): unknown key \"\(unknown)\"; " + (hint.map { $0 + "; " } ?? "")
                                 + "see config/devproxy.example.json")
        }
        file = object
    }

    /// A single value: the flag, else the config key.
    func value(_ name: String) throws -> String? {
        if let flag = arguments.value(name) { return flag }
        let key = name.replacingOccurrences(of: "-", with: "_")
        switch file[key] {
        case nil: return nil
        case let string as String: return try fromFile(try Self.nonEmpty(string, key: key), name)
        // `"body_limit": 1048576`; but `"log": true` is not the file "1".
        case let number as NSNumber where !JSONDocument.isBoolean(number): return number.stringValue
        default: throw CommandFailure("config key \"\(key)\" must be a string")
        }
    }

    /// Repeatable values whose flags replace the config file's list rather than add to it: a
    /// `--mode` on the command line says which listeners to open, not which to open as well.
    static let replacedByFlags: Set<String> = ["mode"]

    /// A repeatable value: the flags, then the config key's (a string or a list). Flags come
    /// first, so where the first match wins (`--persona`, `--resolve`) they win, and the file's
    /// entries still apply: a `--redact` on the command line must not un-redact the file's
    /// `Authorization`, nor a `--passthrough` decrypt a host the file passes through. For
    /// `replacedByFlags`, the flags alone when given.
    func values(_ name: String) throws -> [String] {
        let flags = arguments.values(name)
        if !flags.isEmpty, Self.replacedByFlags.contains(name) { return flags }
        let key = name.replacingOccurrences(of: "-", with: "_")
        switch file[key] {
        case nil: return flags
        case let string as String: return flags + [try fromFile(try Self.nonEmpty(string, key: key), name)]
        case let list as [String]: return try flags + list.map { try fromFile(try Self.nonEmpty($0, key: key), name) }
        default: throw CommandFailure("config key \"\(key)\" must be a string or a list of strings")
        }
    }

    /// A value of the config file's, its paths read against the file's directory.
    private func fromFile(_ value: String, _ name: String) throws -> String {
        try ConfigFilePaths.resolve(value, option: name, directory: fileDirectory)
    }

    /// A config value, refused when empty as the same flag's is (`Arguments`): `"log": ""` read on
    /// as "cannot write : No such file or directory".
    private static func nonEmpty(_ value: String, key: String) throws -> String {
        guard !value.isEmpty else {
            throw UsageError("config key \"\(key)\" is empty; give it a value or leave the key out")
        }
        return value
    }

    /// The map rules' options as given, each kind's flags then its config entries, for the web
    /// UI's Rules view (`RuleBoard`), which shows where each came from.
    func startRules() throws -> [(kind: RuleBoard.Kind, text: String, origin: RuleBoard.Origin)] {
        let kinds: [RuleBoard.Kind] = [.blockList, .mapRemote, .mapLocal, .modifyHeaders, .modifyBody]
        return try kinds.flatMap { kind in
            let flags = arguments.values(kind.rawValue).count
            return try values(kind.rawValue).enumerated().map { index, text in
                (kind, text, index < flags ? RuleBoard.Origin.flag : .config)
            }
        }
    }

    /// Whether the command line itself (not the config file) gives `name`.
    func onCommandLine(_ name: String) -> Bool {
        arguments.value(name) != nil || arguments.flag(name)
    }

    /// `make()`, whose rule that does not parse is named by the config file when it is the file's:
    /// the error said `--map-remote |a( is not a rule`, and a user whose command line has no
    /// `--map-remote` looked for it there. The file's when `flagsAlone` (the same without the file's
    /// entries) parses.
    private func namingTheFile<T>(_ make: () throws -> T, flagsAlone: () throws -> T) throws -> T {
        do {
            return try make()
        } catch let error as ConfigurationError {
            guard let path = arguments.value("config"), (try? flagsAlone()) != nil else { throw error }
            throw ConfigurationError("\(path) (the config file): \(error.description)")
        }
    }

    /// A boolean: the flag, else the config key.
    func flag(_ name: String) throws -> Bool {
        if arguments.flag(name) { return true }
        let key = name.replacingOccurrences(of: "-", with: "_")
        guard let value = file[key] else { return false }
        switch value {
        case let bool as Bool where JSONDocument.isBoolean(value): return bool
        default: throw CommandFailure("config key \"\(key)\" must be true or false")
        }
    }

    /// The proxy configuration these options describe.
    func configuration() throws -> ProxyConfiguration {
        var configuration = ProxyConfiguration()
        if let listen = try value("listen") {
            let (host, port) = try Self.hostPort(listen, option: "listen", example: 8080)
            configuration.listenHost = host
            configuration.listenPort = port
        }
        configuration.allowRemote = try flag("allow-remote")
        if let path = try value("proxy-auth") {
            let text = String(decoding: try SecureFile.read(path, what: "the proxy credentials file"), as: UTF8.self)
            configuration.proxyCredentials = try ProxyCredential.parse(text, source: path)
        }
        configuration.passthrough = try values("passthrough").map(GlobPattern.init)
        configuration.resolve = try values("resolve").map(ResolveOverride.init(parsing:))
        for path in try values("upstream-ca") {
            let bytes = try SecureFile.read(path, what: "the upstream CA file")
            do {
                configuration.upstreamCAs += try Certificate.all(from: bytes)
            } catch let error as CAError {
                // Named: "the certificate is not valid DER: too small" said neither option nor file.
                throw CommandFailure("--upstream-ca \(path): \(error.reason)")
            }
        }
        configuration.clientCertificates = try clientCertificates()
        configuration.protoSchema = try protoSchema()
        configuration.grpcReflection = try flag("grpc-reflection")
        configuration.insecureUpstream = try flag("insecure-upstream")
        configuration.eagerUpstream = try !flag("lazy-upstream")
        configuration.http2 = try !flag("no-http2")
        let modes = try values("mode").map(ListenerMode.init(parsing:))
        if !modes.isEmpty { configuration.modes = modes }
        // `--listen` given with modes that all have an address of their own listens nowhere: the
        // natural way to add a SOCKS5 listener left HTTP clients with "connection refused".
        if let listen = try value("listen"), !modes.isEmpty, modes.allSatisfy({ $0.port != nil }) {
            throw UsageError("--listen \(listen) is not used: every --mode has an address of its own; add "
                             + "`--mode regular` to listen there too, or leave --listen out")
        }
        configuration.reverseTLS = try flag("reverse-tls")
        if let path = try value("upstream-proxy-auth-file") {
            let text = String(decoding: try SecureFile.read(path, what: "the upstream proxy credentials file"),
                              as: UTF8.self)
            let credential = try ProxyCredential.parse(text, source: path)[0]
            configuration.upstreamProxyAuthorization = UpstreamProxy.basicAuthorization(credential)
        }
        if let url = try value("upstream-proxy") {
            configuration.upstreamProxy = try UpstreamProxy(url: try ModeURL(parsing: url, what: "--upstream-proxy"),
                                                            authorization: configuration.upstreamProxyAuthorization)
        } else if configuration.upstreamProxyAuthorization != nil && !modes.contains(where: { $0.kind == .upstream }) {
            throw UsageError("--upstream-proxy-auth-file needs --upstream-proxy URL or --mode upstream:URL")
        }
        if let limit = try value("body-limit") {
            guard let bytes = Int(limit), bytes >= 0 else { throw UsageError("--body-limit must be a number of bytes") }
            configuration.bodyLimit = bytes
        }
        configuration.redactHeaders = try values("redact")
        configuration.mapRules = try namingTheFile {
            try MapRules(remote: try values("map-remote"), local: try values("map-local"),
                         headers: try values("modify-headers"), block: try values("block-list"),
                         body: try values("modify-body"), redact: configuration.redactHeaders)
        } flagsAlone: {
            try MapRules(remote: arguments.values("map-remote"), local: arguments.values("map-local"),
                         headers: arguments.values("modify-headers"), block: arguments.values("block-list"),
                         body: arguments.values("modify-body"), redact: configuration.redactHeaders)
        }
        let signatureRules = try values("verify-signature").map(SignatureRule.parse)
        if !signatureRules.isEmpty {
            configuration.signatures = try SignatureVerifier(rules: signatureRules,
                                                             redactedHeaders: configuration.redactHeaders)
        }
        configuration.addVia = try flag("via")
        configuration.keepAltSvc = try flag("keep-alt-svc")
        if let seconds = try seconds("header-timeout") { configuration.headerTimeout = seconds }
        if let seconds = try seconds("idle-timeout") { configuration.idleTimeout = seconds }
        if let seconds = try seconds("connect-timeout") { configuration.connectTimeout = seconds }
        if let seconds = try seconds("upstream-timeout") { configuration.upstreamTimeout = seconds }
        configuration.throttle = try value("throttle").map(ThrottleProfile.init(parsing:))
        configuration.throttleHosts = try values("throttle-hosts").map(GlobPattern.init)
        if configuration.throttle == nil, let host = configuration.throttleHosts.first {
            throw UsageError("--throttle-hosts \(host) names hosts to throttle: add --throttle PROFILE")
        }
        return configuration
    }

    /// A timeout in whole seconds (`--idle-timeout 300`), 1 to 86400 (a day).
    private func seconds(_ name: String) throws -> TimeInterval? {
        guard let text = try value(name) else { return nil }
        guard let seconds = Int(text), (1...86_400).contains(seconds) else {
            throw UsageError("--\(name) must be a whole number of seconds from 1 to 86400 (got \(text))")
        }
        return TimeInterval(seconds)
    }

    /// `--proto FILE`, repeatable (`ProtoFiles`); nil without any.
    private func protoSchema() throws -> ProtoSchema? {
        try ProtoFiles.schema(try values("proto"))
    }

    /// `--client-cert [HOST_GLOB=]FILE` rules, each file read (and its key checked against its
    /// certificate) now, so a bad one stops the start with one line rather than failing later.
    private func clientCertificates() throws -> [ClientCertificateRule] {
        let arguments = try values("client-cert")
        guard !arguments.isEmpty else { return [] }
        let passphrase = try PassphraseSource.resolve(file: try value("client-cert-passphrase-file"),
                                                      variable: ClientIdentity.passphraseVariable).read()
        return try arguments.map { argument in
            do {
                return try ClientCertificateRule.parse(argument, passphrase: passphrase)
            } catch let error as CAError {
                throw CommandFailure("--client-cert: \(error.reason)")
            }
        }
    }

    /// Splits `HOST:PORT` (`[::1]:8080` for IPv6), the value of `--option` (`listen`, `web`), whose
    /// usual port `example` shows in the error for a value that is not one.
    static func hostPort(_ text: String, option: String, example: Int) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            // A port alone, as mitmproxy's `-p 8080` and many dev servers' `--port` take it.
            if let port = Int(text), (0...65535).contains(port) {
                throw UsageError("--\(option) \(text) has no address: write 127.0.0.1:\(port) "
                                 + "(0.0.0.0:\(port) with --allow-remote to be reached from other machines)")
            }
            throw UsageError("--\(option) \(text) is not HOST:PORT "
                             + "(such as 127.0.0.1:\(example); port 0 picks a free one)")
        }
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw UsageError("--\(option) \(text): the port must be a number from 0 to 65535 (0 picks a free one)")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }
}
