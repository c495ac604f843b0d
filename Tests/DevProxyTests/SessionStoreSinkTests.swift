import CertAuthority
@testable import DevProxy
import Foundation
import SessionStore
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
        let listing = try Subprocess.run(Subprocess.devproxy, ["sessions", "--ca-dir", dir.file("ca")])
        #expect(listing.stdout.contains(String(path)), "\(listing.output)")
        #expect(listing.stdout.contains("  3  "), "\(listing.output)")
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
        FileManager.default.createFile(atPath: gate, contents: Data())
        curl.waitUntilExit()
        #expect(curl.terminationStatus == 0)
        #expect(proxy.stop().status == 0)
        let finished = try #require(try store.summary(id: running.id))
        #expect(finished.phase == .finished)
        #expect(finished.responseSize == 1024 + 5)
        #expect(try store.count() == 1)
    }
}
