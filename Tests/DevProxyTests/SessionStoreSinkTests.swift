import HTTPTypes
import CertAuthority
@testable import DevProxy
import Foundation
@testable import SessionStore
import Testing
import TestSupport

/// `devproxy run --session`: every flow also lands in a SQLite session store that the filter
/// language queries and `devproxy sessions` lists.
@Suite struct SessionStoreSinkTests {
    /// Flows made with curl are in the store after the run, 0600, findable by filter, with the
    /// same JSON as the flow log; `--session new` files are listed by `devproxy sessions`.
    @Test func flowsLandInTheSessionStore() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"), "--upstream-ca", origin.caPath,
                                         "--session", "new", "--quiet"])
        let path = try #require(proxy.banner.split(separator: "\n").first { $0.hasPrefix("session: ") }?.dropFirst(9))
        for request in ["/cl?n=5", "/cl?n=7", "/404"] {
            let curl = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", dir.file("ca/root.pem"),
                                                   "-o", "/dev/null", origin.url(request)])
            #expect(curl.status == 0, "\(curl.output)")
        }
        #expect(proxy.stop().status == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: String(path))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let store = try SessionStore(path: String(path), readOnly: true)
        defer { store.close() }
        #expect(try store.count() == 3)
        let notFound = try store.flows(filter: try FilterExpression(parsing: "~c 404"))
        #expect(notFound.total == 1)
        #expect(notFound.flows.first?.url?.hasSuffix("/404") == true)
        let log = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        let first = try #require(log.first)
        let stored = try #require(try store.flowJSON(id: first.id))
        #expect(stored == String(decoding: first.jsonBytes, as: UTF8.self))
        // The header blocks the sink writes on the connection's thread read back as the log's fields.
        let requestFields = try #require(try store.headerFields(id: first.id, part: .request))
        #expect(requestFields.map { [$0.name, $0.value] } == first.request?.headers.arrays)
        let responseFields = try #require(try store.headerFields(id: first.id, part: .response))
        #expect(responseFields.map { [$0.name, $0.value] } == first.response?.headers.arrays)
        #expect(try store.flows(filter: try FilterExpression(parsing: "~hq curl/")).total == 3)
        let listing = try Subprocess.run(Subprocess.devproxy, ["sessions", "--ca-dir", dir.file("ca")])
        #expect(listing.stdout.contains(String(path)), "\(listing.output)")
        #expect(listing.stdout.contains("  3  "), "\(listing.output)")
    }

    /// `--session off`: like mitmdump without `-w`, nothing is stored and no web UI listens; the
    /// flow log still gets every flow, and asking for the UI as well is a usage error.
    @Test func sessionOffStoresNothingAndServesNoWebUI() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--log", dir.file("flows.jsonl"),
                                         "--upstream-ca", origin.caPath, "--session", "off"])
        #expect(proxy.banner.contains("session: off (flows are not stored; the web UI is off)"), "\(proxy.banner)")
        let curl = try Subprocess.run("curl", ["-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert",
                                               dir.file("ca/root.pem"), "-o", "/dev/null", origin.url("/cl?n=5")])
        #expect(curl.status == 0, "\(curl.output)")
        let stopped = proxy.stop()
        #expect(stopped.status == 0)
        #expect(!(proxy.banner + stopped.stdout).contains("web ui: "), "\(stopped.stdout)")
        #expect(try FlowLogReader.read(path: dir.file("flows.jsonl")).flows.count == 1)
        let sessions = (try? FileManager.default.contentsOfDirectory(atPath: dir.file("ca/sessions"))) ?? []
        #expect(sessions.isEmpty, "\(sessions)")
        for extra in [["--web", "127.0.0.1:0"], ["--store-body-limit", "10"]] {
            let arguments = ["run", "--ca-dir", dir.file("ca"), "--session", "off", "--listen", "127.0.0.1:0"] + extra
            let refused = try Subprocess.run(Subprocess.devproxy, arguments)
            #expect(refused.status == 2, "\(refused.output)")
            #expect(refused.stderr.contains("cannot go with --session off"), "\(refused.output)")
        }
    }

    /// A flow is in the store while it runs: pending (`started`) once its request head is in,
    /// `responded` with its status once the response head is, `finished` when it ends. The origin
    /// holds its body back until the test has seen the `responded` row.
    @Test func runningFlowsAppearBeforeTheyFinish() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let session = dir.file("live.sqlite")
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--upstream-ca", origin.caPath, "--session", session, "--quiet"])
        let gate = dir.file("gate")
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        curl.arguments = ["curl", "-sS", "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", dir.file("ca/root.pem"),
                          "-o", "/dev/null", origin.url("/drip?kb=1&gate=\(gate)")]
        try curl.run()
        defer { if curl.isRunning { kill(curl.processIdentifier, SIGKILL) }; curl.waitUntilExit() }
        let store = try SessionStore(path: session, readOnly: true)
        defer { store.close() }
        var seen: FlowSummary?
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if let flow = try store.flows().flows.first, flow.phase == .responded {
                seen = flow
                break
            }
            usleep(20_000)
        }
        let running = try #require(seen, "the running flow never reached the store as responded")
        #expect(running.status == 200)
        #expect(running.method == "GET")
        #expect(running.durationMs == nil)
        #expect(FileManager.default.createFile(atPath: gate, contents: Data()))
        curl.waitUntilExit()
        #expect(curl.terminationStatus == 0)
        #expect(proxy.stop().status == 0)
        let finished = try #require(try store.summary(id: running.id))
        #expect(finished.phase == .finished)
        #expect(finished.responseSize == 1024 + 5)
        #expect(try store.count() == 1)
    }

    /// A finished flow reaches the store as its summary and bodies built from the `Flow` (no JSON
    /// parse): the same, field for field, as the store reads from the flow's log line, for HTTP/2
    /// with a text and a binary body, a failed request with odd header case, a WebSocket and a tunnel.
    @Test func finishedEntryMatchesTheLogLineRead() throws {
        var h2 = FlowDraft(client: "127.0.0.1:5000", mode: .https, host: "api.example", port: 443)
        h2.flow.request = Flow.Request(method: "POST", url: "https://api.example/v1?q=\u{e9}", httpVersion: "HTTP/2",
                                       headers: [["Content-Type", "application/json"], ["x-a", "1\"2\\3\n"]],
                                       body: Flow.Body(size: 12, sha256: "ab", text: "{\"k\":\"v\u{1F600}\"}", base64: nil,
                                                       truncated: false, decoded: nil),
                                       pseudoHeaders: [[":method", "POST"]])
        h2.flow.response = Flow.Response(status: 200, reason: "OK", httpVersion: "HTTP/2",
                                         headers: [["CONTENT-TYPE", "application/octet-stream"]],
                                         body: Flow.Body(size: 300, sha256: "cd", text: nil,
                                                         base64: Data([0, 1, 2, 255, 254]).base64EncodedString(),
                                                         truncated: true, decoded: nil))
        h2.flow.persona = "team"
        h2.flow.signer = Flow.SignerInfo(serial: "0a", email: "a@b.c")
        var failed = FlowDraft(client: "127.0.0.1:5001", mode: .http, host: "h", port: 80)
        failed.flow.request = Flow.Request(method: "GET", url: "http://h/", httpVersion: "HTTP/1.1",
                                           headers: [["content-type", "text/plain"]], body: nil)
        failed.fail(.upstreamClosed, "closed")
        var socket = FlowDraft(client: "127.0.0.1:5002", mode: .websocket, host: "w", port: 443)
        socket.flow.websocket = []
        var tunnel = FlowDraft(client: "127.0.0.1:5003", mode: .tunnel, host: "t", port: 443)
        tunnel.flow.tunnel = Flow.TunnelInfo(sni: "t", bytesFromClient: 1, bytesFromServer: 2, reason: "passthrough")
        var late = FlowDraft(client: "127.0.0.1:5004", mode: .https, host: "l", port: 443)
        late.flow.response = Flow.Response(status: 101, reason: "", httpVersion: "HTTP/1.1", headers: [], body: nil)
        late.flow.websocket = [Flow.WebSocketMessageRecord(direction: "client_to_server", opcode: "text", length: 1,
                                                           text: "x", base64: nil)]
        usleep(3_000)
        for draft in [h2, failed, socket, tunnel, late] {
            let flow = draft.finished()
            let (record, bodies) = SessionStoreSink.finishedEntry(flow)
            let (entry, json) = try #require(SessionStore.read(flowLogLine: flow.jsonBytes))
            #expect(record == entry.record)
            #expect(bodies == entry.bodies)
            #expect(json.text == String(decoding: flow.jsonBytes, as: UTF8.self))
            #expect(record.summary.durationMs != nil)
        }
        #expect(SessionStoreSink.finishedEntry(h2.finished()).1.response?.bytes == [0, 1, 2, 255, 254])
        #expect(SessionStoreSink.finishedEntry(socket.finished()).0.summary.isWebSocket)
    }
}
