import CertAuthority
import DevProxy
import Foundation
import SessionStore
import WebUI

/// `devproxy run`'s web UI (docs/web-ui.md): on by default at 127.0.0.1:8081 (or the next free
/// port), `--web HOST:PORT`, `--no-web`.
extension RunCommand {
    /// The UI's bound listener, or nil with `--no-web`. Bound before the proxy starts, so the
    /// proxy can refuse to forward to it.
    static func webListener(_ options: RunOptions) throws -> Listener? {
        // `--web` and `--no-web` together contradict each other; `--web` on the command line
        // wins over the config file's `no_web`, as flags win. Either way it was dropped silently.
        if options.onCommandLine("web"), options.onCommandLine("no-web") {
            throw UsageError("--web and --no-web contradict each other; give one")
        }
        guard try !options.flag("no-web") || options.onCommandLine("web") else { return nil }
        let configuration = try webConfiguration(options)
        do {
            return try WebUI.bind(configuration)
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        } catch let error as NetworkError {
            throw CommandFailure("cannot serve the web UI: \(error.message); "
                                 + "choose another --web HOST:PORT or --no-web")
        }
    }

    /// With `--session off` there is no UI (it reads the session store): nil, and a usage error
    /// for a `--web` or `--web-password-file` that asks for one.
    static func noWebWithoutSession(_ options: RunOptions) throws -> Listener? {
        for option in ["web", "web-password-file"] where try options.value(option) != nil {
            throw UsageError("the web UI shows the session store: --\(option) cannot go with --session off")
        }
        return nil
    }

    /// `--web`, `--allow-remote`, `--web-password-file` as the UI's configuration.
    static func webConfiguration(_ options: RunOptions) throws -> WebUIConfiguration {
        var configuration = WebUIConfiguration()
        if let web = try options.value("web") {
            (configuration.host, configuration.port) = try RunOptions.hostPort(web, option: "web", example: 8081)
            configuration.tryNextPorts = false
        }
        configuration.allowRemote = try options.flag("allow-remote")
        if let path = try options.value("web-password-file") { configuration.password = try webPassword(path) }
        return configuration
    }

    /// The shortest web UI password taken: the UI is reachable from the network when it has one.
    static let minimumPasswordLength = 12

    /// The web UI's password from `--web-password-file`, for `run` and `web` alike.
    /// - Throws: `CommandFailure` when the file is empty (an empty password would be none) or the
    ///   password is shorter than `minimumPasswordLength`.
    static func webPassword(_ path: String) throws -> String {
        let text = String(decoding: try SecureFile.read(path, what: "the web UI password file"), as: UTF8.self)
        let password = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !password.isEmpty else { throw CommandFailure("\(path) is empty; put the web UI's password in it") }
        guard password.count >= minimumPasswordLength else {
            throw CommandFailure("\(path) holds a \(password.count)-character password; the web UI, reachable from the "
                                 + "network, needs at least \(minimumPasswordLength) (openssl rand -base64 18 > \(path))")
        }
        return password
    }

    /// Starts the UI beside the running proxy and prints `web ui: URL` (scripts read that line).
    static func startWeb(_ listener: Listener, options: RunOptions, store: SessionStore, server: ProxyServer,
                         configuration: ProxyConfiguration, selection: SignerSelection.Result, ca: CAStore,
                         reportsPath: String?, wireGuardKeys: WireGuardKeyFile? = nil) throws -> WebUI {
        let entry = server.ownEntry
        var link = WebUI.ProxyLink(listeners: server.boundListeners.map { ($0.kind.rawValue, $0.address.description) },
                                   replayHost: entry?.host ?? "127.0.0.1", replayPort: entry?.port ?? 0,
                                   replaySecret: configuration.replaySecret ?? "", proxyAuthorization: entry?.authorization,
                                   reportsPath: reportsPath, onboardingURL: configuration.onboarding?.address,
                                   signatures: configuration.signatures)
        link.onboardingLoopback = configuration.onboarding?.isLoopbackOnly ?? false
        link.intercepts = configuration.intercepts
        link.throttle = configuration.throttle.map { ($0, configuration.throttleHosts.map(\.pattern)) }
        link.throttleSwitch = configuration.throttleSwitch
        link.ruleBoard = configuration.ruleBoard
        let signer = selection.signer
        let root = signer.root ?? (try? ca.rootCertificate())
        let renew = signer.certificate.isSelfSigned ? nil
            : "devproxy ca issue --email \(signer.certificate.email ?? "ENGINEER@EXAMPLE.COM")"
        var settings = try webConfiguration(options)
        // Calls recorded before a --grpc-reflection answer came are typed when shown, and so are
        // those of earlier runs into the same --session FILE, by the answers it kept.
        let kept = SessionGRPCSchemas(store: store, base: nil)
        settings.grpcSchema = { [server] host, port in
            let known = server.knownSchema(host: host, port: port)
            guard var stored = kept.schema(host: host, port: port) else { return known }
            if let known { stored.merge(known) }
            return stored
        }
        // The CA view's Devices (WireGuard) part: each device's state, config and QR code.
        if let capture = server.wireGuard, let wireGuardKeys {
            settings.wireGuard = WebUIConfiguration.WireGuardDevices(capture: capture, keys: wireGuardKeys)
        }
        // A run without a regular listener (socks5, reverse) still has its throttle, rules and
        // breakpoints; only replay needs the regular listener (replayPort 0 without one). With no
        // link at all, Offline and the throttle menu could never be set on such a run.
        let web = WebUI(listener: listener, configuration: settings, store: store, proxy: link,
                        authority: WebUI.Authority(signer: signer.certificate, root: root, renewCommand: renew))
        web.start()
        Output.line("web ui: \(web.url)")
        if !web.address.isLoopback {
            // The UI speaks plain HTTP: beyond loopback its password and cookie cross the network
            // as they are (mitmweb's does too, without a word).
            Output.warning("the web UI at \(web.address) is plain HTTP: its password and session cookie cross the network "
                           + "unencrypted; reach it through an SSH tunnel or a VPN on networks you do not trust")
        }
        return web
    }
}
