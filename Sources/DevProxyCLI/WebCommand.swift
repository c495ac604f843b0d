import CertAuthority
import DevProxy
import Foundation
import SessionStore
import WebUI

/// `devproxy web FILE`: a saved session, a flow log or a HAR file in the web UI, proxying nothing.
enum WebCommand {
    static let usage = """
    Open a saved session, a flows.jsonl flow log or a HAR file in the web UI (nothing is proxied).

      devproxy web ~/.local/share/devproxy/sessions/session-20260301T120102Z.sqlite
      devproxy web flows.jsonl --web 127.0.0.1:0
      devproxy web capture.har

    Options: --web HOST:PORT (default 127.0.0.1:8081, the next free port when taken)
             --allow-remote --web-password-file FILE (both needed beyond loopback)
             --proto FILE (a .proto or a FileDescriptorSet, repeatable: gRPC calls recorded without
                   their types are shown typed by it, as `run --proto` records them; a saved session
                   also types them by the answers `run --grpc-reflection` kept in it)
    Prints `web ui: http://127.0.0.1:PORT/?token=TOKEN`; Ctrl-C stops it. Nothing is proxied, so
    replay needs `devproxy run` (the API answers 409 here). A session saved by an older devproxy is
    brought forward to this one's schema in place (a newer one is refused). See `devproxy sessions`.
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" || raw.isEmpty {
            return Output.usage(usage, missing: raw.isEmpty)
        }
        let arguments = try Arguments(raw, valued: ["web", "web-password-file", "proto"], booleans: ["allow-remote"])
        guard arguments.positionals.count == 1 else { throw UsageError("`devproxy web` takes one FILE; see --help") }
        let path = arguments.positionals[0]
        // The address is checked before the file is read: a mistyped --web made a large log
        // import whole before it was refused.
        let webAddress = try arguments.value("web").map { try RunOptions.hostPort($0, option: "web", example: 8081) }
        // Read before the file too: a typo in it stops the start before a long import.
        let schema = try ProtoFiles.schema(arguments.values("proto"))
        let opened: (store: SessionStore, report: SessionImport.Report?)
        do {
            // A flow log's lines are taken as `devproxy har` takes them, and skipped for the same reasons.
            opened = try SessionImport.open(path: path, checkingLines: FlowLogReader.problem(in:terminated:))
        } catch let error as SessionStoreError {
            // Most reasons name the file already ("cannot read PATH: …", "PATH is not a HAR file").
            throw CommandFailure(error.reason.contains(path) ? error.reason : "cannot open \(path): \(error.reason)")
        }
        // A saved session may still be written by the `devproxy run` beside it: the list follows it.
        if opened.report == nil { opened.store.watchExternalWrites() }
        if let report = opened.report {
            let count = report.problems.count
            let unit = report.problems.first?.unit ?? "line"
            let units = count == 1 ? unit : unit == "entry" ? "entries" : unit + "s"
            let skipped = count == 0 ? "" : " (\(count) unreadable \(units) skipped, see the warnings)"
            Output.line("imported \(report.flows) flow(s) from \(path)\(skipped)")
            Output.warnings(report.problems.map { "\(path) \($0)" }, rest: "unusable record(s)")
            // Not one record a flow: the wrong file, and an empty UI would not say so.
            if report.flows == 0, !report.problems.isEmpty {
                opened.store.close()
                throw CommandFailure("\(path) holds no flow: give a saved session, a flow log written with --log, "
                                     + "or a HAR file")
            }
        }
        var configuration = WebUIConfiguration()
        if let (host, port) = webAddress {
            (configuration.host, configuration.port) = (host, port)
            configuration.tryNextPorts = false
        }
        configuration.allowRemote = arguments.flag("allow-remote")
        if opened.report == nil {
            // A saved session: what --grpc-reflection learnt while it was recorded, and --proto.
            let kept = SessionGRPCSchemas(store: opened.store, base: schema)
            configuration.grpcSchema = { host, port in kept.schema(host: host, port: port) }
        } else if let schema {
            configuration.grpcSchema = { _, _ in schema }
        }
        configuration.imported = opened.report.map { report in
            WebUIConfiguration.ImportNote(file: path, flows: report.flows, skipped: report.problems.count,
                                          firstSkipped: report.problems.first.map { ($0.unit, $0.number, $0.reason) })
        }
        if let file = arguments.value("web-password-file") { configuration.password = try RunCommand.webPassword(file) }
        let listener: Listener
        do {
            listener = try WebUI.bind(configuration)
        } catch let error as ConfigurationError {
            throw CommandFailure(error.description)
        } catch let error as NetworkError {
            throw CommandFailure("cannot serve the web UI: \(error.message); choose another --web HOST:PORT")
        }
        let store = CAStore(directory: CAStore.resolveDirectory(flag: nil))
        let root = store.exists ? try? store.rootCertificate() : nil
        let web = WebUI(listener: listener, configuration: configuration, store: opened.store,
                        authority: root.map { WebUI.Authority(signer: nil, root: $0, renewCommand: nil) })
        web.start()
        let termination = RunCommand.TerminationSignals()
        Output.line("web ui: \(web.url)")
        if !web.address.isLoopback {
            // The UI speaks plain HTTP: beyond loopback its password and cookie cross the network
            // as they are (mitmweb's does too, without a word).
            Output.warning("the web UI at \(web.address) is plain HTTP: its password and session cookie cross the network "
                           + "unencrypted; reach it through an SSH tunnel or a VPN on networks you do not trust")
        }
        termination.wait()
        web.stop()
        opened.store.close()
        return 0
    }
}
