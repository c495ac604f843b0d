import CertAuthority
import DevProxy
import Foundation
import Testing
import TestSupport

/// `ReportCollector`: which flows are reports, what a record holds (signer traced to the
/// engineer), the file's mode, and the `--sink-reports` predicate.
@Suite struct ReportCollectorTests {
    let fixture: PKIFixture
    let path: String

    init() throws {
        fixture = try PKIFixture()
        path = fixture.directory.file("reports.jsonl")
    }

    func chain(host: String) throws -> [String] {
        let leaf = try LeafIssuer(signer: fixture.signer).issue(for: [try LeafName(host)])
        return [leaf.certificate.pem, fixture.intermediate.pem, fixture.root.pem]
    }

    @Test func trustKitReportIsRecordedWithItsSigner() throws {
        let collector = try ReportCollector(path: path, store: fixture.store)
        let body = try SyntheticFlows.trustKitReport(host: "api.acme.dev", chain: try chain(host: "api.acme.dev"))
        collector.record(try SyntheticFlows.flow(id: "f1", host: "reports.acme.dev", persona: "team", method: "POST",
                                                 url: "https://reports.acme.dev/pins", body: body))
        collector.record(try SyntheticFlows.flow(id: "f2", host: "api.acme.dev", persona: "team", body: "{\"hello\": 1}"))
        collector.close()
        let contents = try JSONLines.read(ReportRecord.self, from: path)
        #expect(contents.problems.isEmpty)
        let record = try #require(contents.records.first)
        #expect(contents.records.count == 1, "an ordinary JSON body is not a report")
        #expect(record.flowID == "f1" && record.kind == .trustKit && record.hostname == "api.acme.dev")
        #expect(record.validationResult == 1 && record.enforcePinning == false)
        #expect(record.knownPins?.count == 1)
        #expect(record.signer == ReportRecord.Signer(serial: fixture.intermediate.serialHex, email: "ana@acme.dev"))
        #expect(fixture.directory.mode(path) == 0o600)
        let line = try #require(String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        for key in ["id", "flow_id", "received", "url", "kind", "hostname", "noted-hostname", "validation-result",
                    "enforce-pinning", "known-pins", "signer"] {
            #expect(object[key] != nil, "missing \(key)")
        }
    }

    /// A report whose chain came from the QA alternate root (the `unpinned` persona's) says so:
    /// it read "not this CA", where `ca trace` named the QA alternate root.
    @Test func aChainFromTheQAAlternateRootIsNamed() throws {
        try QAAlternateRoot(store: fixture.store).create()
        let personas = try PersonaCertificates(store: fixture.store, team: LeafCache(issuer: LeafIssuer(signer: fixture.signer)))
        let leaf = try #require(try personas.leaf(for: .unpinned, host: "api.acme.dev"))
        let chain = [leaf.certificate.pem] + leaf.chain.map(\.pem)
        let collector = try ReportCollector(path: path, store: fixture.store)
        let body = try SyntheticFlows.trustKitReport(host: "api.acme.dev", chain: chain)
        let flow = try SyntheticFlows.flow(id: "q1", host: "reports.acme.dev", persona: "unpinned", method: "POST",
                                           url: "https://reports.acme.dev/pins", body: body)
        let record = collector.report(in: flow)
        #expect(record?.signer?.qaAlternateRoot == true && record?.signer?.email == nil, "\(String(describing: record?.signer))")
        collector.record(flow)
        collector.close()
        let printed = try Subprocess.run(Subprocess.devproxy, ["reports", path])
        #expect(printed.stdout.contains("QA alternate root") && !printed.stdout.contains("not this CA"), "\(printed.stdout)")
    }

    @Test func rfc7469ReportAndPatternMatchedUnknownBodies() throws {
        let collector = try ReportCollector(path: path, reportURIPatterns: ["collector.acme.dev/hpkp*"], store: fixture.store)
        let hpkp = "{\"hostname\": \"www.acme.dev\", \"port\": 443, \"known-pins\": [\"pin-sha256=\\\"x\\\"\"], \"served-certificate-chain\": []}"
        let one = collector.report(in: try SyntheticFlows.flow(id: "a", host: "x", persona: nil, method: "POST", body: hpkp))
        #expect(one?.kind == .rfc7469 && one?.hostname == "www.acme.dev" && one?.port == 443 && one?.signer == nil)
        let two = collector.report(in: try SyntheticFlows.flow(id: "b", host: "collector.acme.dev", persona: nil, method: "POST",
                                                               url: "https://collector.acme.dev/hpkp/v1", body: "garbage"))
        #expect(two?.kind == .unknown && two?.hostname == nil)
        #expect(collector.report(in: try SyntheticFlows.flow(id: "c", host: "api.acme.dev", persona: nil)) == nil)
    }

    @Test func reportRequestPredicate() throws {
        let collector = try ReportCollector(path: path, reportURIPatterns: ["https://reports.acme.dev/*"])
        #expect(collector.isReportRequest(method: "POST", url: "https://reports.acme.dev/pins", contentType: nil))
        #expect(!collector.isReportRequest(method: "GET", url: "https://reports.acme.dev/pins", contentType: nil))
        #expect(collector.isReportRequest(method: "post", url: "https://overmind.datatheorem.com/trustkit/report", contentType: nil))
        #expect(collector.isReportRequest(method: "POST", url: "https://x.dev/api/report", contentType: "application/json; charset=utf-8"))
        #expect(!collector.isReportRequest(method: "POST", url: "https://x.dev/api/report", contentType: "text/plain"))
        #expect(!collector.isReportRequest(method: "POST", url: "https://x.dev/api/login", contentType: "application/json"))
        // TrustKit's documented form, and what apps name theirs: they went to the real collector.
        for path in ["/log_report", "/pin-report", "/pinning/Report?v=2"] {
            #expect(collector.isReportRequest(method: "POST", url: "https://x.dev" + path, contentType: "application/json"), "\(path)")
        }
        #expect(!collector.isReportRequest(method: "POST", url: "https://x.dev/reports/list", contentType: "application/json"))
    }

    /// A report that cannot be written (`/dev/full`: ENOSPC, as a full disk) is kept for the CLI
    /// to report at exit, and a device given as the path keeps its own mode.
    @Test func aReportThatCannotBeWrittenIsKept() throws {
        let collector = try ReportCollector(path: "/dev/full", store: nil)
        let body = try SyntheticFlows.trustKitReport(host: "api.acme.dev", chain: try chain(host: "api.acme.dev"))
        collector.record(try SyntheticFlows.flow(id: "f", host: "r", persona: nil, method: "POST", body: body))
        collector.close()
        #expect(collector.writeError == "cannot write /dev/full: No space left on device")
        var status = stat()
        #expect(stat("/dev/full", &status) == 0 && status.st_mode & 0o777 == 0o666)
    }

    @Test func concurrentRecordsNeverInterleave() throws {
        let collector = try ReportCollector(path: path, store: nil)
        let body = try SyntheticFlows.trustKitReport(host: "api.acme.dev", chain: try chain(host: "api.acme.dev"))
        let flow = try SyntheticFlows.flow(id: "f", host: "r", persona: nil, method: "POST", body: body)
        DispatchQueue.concurrentPerform(iterations: 40) { _ in collector.record(flow) }
        collector.close()
        let contents = try JSONLines.read(ReportRecord.self, from: path)
        #expect(contents.records.count == 40 && contents.problems.isEmpty)
        #expect(Set(contents.records.map(\.id)).count == 40)
    }

    @Test func tornLastLineIsReportedNotDropped() throws {
        let good = "{\"id\":\"r1\",\"flow_id\":\"f\",\"received\":\"t\",\"url\":\"u\",\"kind\":\"unknown\",\"signer\":null}"
        let contents = JSONLines.decode(ReportRecord.self, Data((good + "\n" + "{\"id\":\"r2\",\"flo").utf8))
        #expect(contents.records.count == 1)
        #expect(contents.problems == ["line 2: not a complete record (torn write?)"])
    }
}
