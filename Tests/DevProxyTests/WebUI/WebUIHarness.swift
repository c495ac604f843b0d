@testable import DevProxy
import Foundation
import SessionStore
import TestSupport
@testable import WebUI

/// A web UI on 127.0.0.1:0 over a temporary session store, optionally beside a real proxy
/// (`ProxyHarness`) whose flows go to that store and which replays go through. Stopped when released.
final class WebUIHarness: @unchecked Sendable {  // request() only reads lets and runs curl
    let store: SessionStore
    let proxy: ProxyHarness?
    let web: WebUI
    let port: Int
    let directory = TemporaryDirectory()
    var token: String { web.token }
    var base: String { "http://127.0.0.1:\(port)" }

    init(withProxy: Bool = false, authority: WebUI.Authority? = nil, password: String? = nil,
         signatures: SignatureVerifier? = nil, intercepts: Intercepts? = nil, configure: (inout ProxyConfiguration) -> Void = { _ in },
         web adjust: (inout WebUIConfiguration) -> Void = { _ in }) throws {
        store = try SessionStore.temporary()
        var configuration = WebUIConfiguration()
        configuration.port = 0
        configuration.password = password
        adjust(&configuration)
        let listener = try WebUI.bind(configuration)
        var link: WebUI.ProxyLink?
        if withProxy {
            let secret = WebUI.newSecret()
            let proxy = try ProxyHarness(configure: { proxyConfiguration in
                proxyConfiguration.forbiddenDestinations = [listener.address]
                proxyConfiguration.replaySecret = secret
                proxyConfiguration.signatures = signatures
                configure(&proxyConfiguration)
            }, extraSinks: [SessionStoreSink(store: store)])
            self.proxy = proxy
            link = WebUI.ProxyLink(listeners: [("regular", "127.0.0.1:\(proxy.port)")], replayHost: "127.0.0.1",
                                   replayPort: proxy.port, replaySecret: secret, signatures: signatures)
        } else {
            proxy = nil
            // Breakpoints without a proxy: the board alone, held and decided by the test.
            if intercepts != nil {
                link = WebUI.ProxyLink(listeners: [], replayHost: "127.0.0.1", replayPort: 9, replaySecret: "unused")
            }
        }
        link?.intercepts = intercepts
        web = WebUI(listener: listener, configuration: configuration, store: store, proxy: link, authority: authority)
        web.start()
        port = listener.address.port
    }

    deinit {
        web.stop()
        store.close()
    }

    /// One answer from the UI: status, headers (names lowercased; the last of repeated ones), body.
    struct Answer {
        let status: Int
        let headers: [String: String]
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
    }

    /// A request with curl (a real HTTP client); `auth` adds the bearer token.
    func request(_ path: String, method: String = "GET", headers: [String] = [], body: String? = nil,
                 auth: Bool = true, extra: [String] = []) throws -> Answer {
        let headerFile = directory.file("headers-\(UUID().uuidString)")
        let bodyFile = directory.file("body-\(UUID().uuidString)")
        var arguments = ["-sS", "--max-time", "30", "-X", method, "-D", headerFile, "-o", bodyFile,
                         "-w", "%{http_code}", "-H", "Expect:"]
        if auth { arguments += ["-H", "Authorization: Bearer \(token)"] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        arguments += extra + [path.hasPrefix("http") ? path : base + path]
        let result = try Subprocess.run("curl", arguments, timeout: 40)
        guard let status = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("curl failed: \(result.output)")
        }
        var fields: [String: String] = [:]
        let head = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        for line in head.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let bytes = [UInt8]((FileManager.default.contents(atPath: bodyFile)) ?? Data())
        return Answer(status: status, headers: fields, body: bytes)
    }

    /// `GET /api/events` on a raw socket, read as it arrives.
    final class EventStream {
        private let socket: Socket
        private let stream: PlainStream
        private(set) var received = ""

        /// `query`: appended to the path, e.g. `?filter=%7Ec%20404`.
        init(_ ui: WebUIHarness, lastEventID: Int? = nil, query: String = "") throws {
            socket = try Socket.connect(host: "127.0.0.1", port: ui.port, timeout: 5)
            socket.setTimeout(1)
            stream = PlainStream(socket)
            let resume = lastEventID.map { "Last-Event-ID: \($0)\r\n" } ?? ""
            try stream.write(Array(("GET /api/events\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(ui.port)\r\n"
                                    + "Authorization: Bearer \(ui.token)\r\n\(resume)\r\n").utf8))
        }

        deinit { socket.close() }

        /// Reads until `marker` has arrived or `timeout` passed; returns whether it arrived.
        @discardableResult
        func read(until marker: String, timeout: TimeInterval = 10) -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let deadline = Date().addingTimeInterval(timeout)
            while !received.contains(marker) && Date() < deadline {
                guard let count = try? buffer.withUnsafeMutableBytes({ try stream.read(into: $0) }) else { continue }
                if count == 0 { break }
                received += String(decoding: buffer[0..<count], as: UTF8.self)
            }
            return received.contains(marker)
        }
    }

    /// Stores a finished flow given as a flow-log line and waits until it is committed.
    func add(_ line: String) {
        store.finished(flowLogLine: Array(line.utf8))
        store.flush()
    }
}
