import CertAuthority
@testable import DevProxy
import Foundation
import SessionStore
import Testing
import TestSupport

/// `--modify-headers` on responses, as mitmproxy's modify_headers runs in its response hook too:
/// curl through the proxy to a real origin over every pairing of HTTP/1.1 and HTTP/2 on the two
/// legs. A rule without a filter changes both the request and the response, `~q` the request
/// alone, `~s` and `~c` the response alone; an empty value removes the origin's header; the
/// flow records the head the client got and each change with `on: "response"`.
@Suite(.serialized) struct ModifyHeadersResponseTests {
    /// The two legs: curl's version flag and the origin (`/secured` answers with
    /// Strict-Transport-Security, Content-Security-Policy and the status asked for, its body the
    /// request's header fields as they arrived).
    enum Legs: String, CaseIterable, CustomStringConvertible {
        case http1ToHTTP1, http1ToHTTP2, http2ToHTTP2, http2ToHTTP1
        var description: String { rawValue }
        var curlFlag: String { self == .http1ToHTTP1 || self == .http1ToHTTP2 ? "--http1.1" : "--http2" }
        var origin: HTTP2Origin.Kind {
            switch self {
            case .http1ToHTTP1, .http2ToHTTP1: return .hypercornHTTP1
            case .http1ToHTTP2: return .misbehaving
            case .http2ToHTTP2: return .hypercornBoth
            }
        }
    }

    static let rules = ["|X-Both|yes", "/~s/Cache-Control/no-store", "/~q/X-Request-Only/1", "|~c 404|X-Not-Found|1",
                        "|~s|Strict-Transport-Security|", "|~hs content-security|Content-Security-Policy|"]

    /// A response as curl `-i` printed it: its header fields (names lower-cased) and its body.
    private struct Printed {
        var status: Int
        var fields: [(name: String, value: String)]
        var body: String

        init(status: Int, fields: [(name: String, value: String)], body: String) {
            (self.status, self.fields, self.body) = (status, fields, body)
        }

        init(_ text: String) throws {
            let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
            // The proxy's answer to curl's CONNECT comes first.
            var parts = normalized.components(separatedBy: "\n\n")
            while parts.count > 1, parts[1].hasPrefix("HTTP/") { parts.removeFirst() }
            let head = try #require(parts.first?.split(separator: "\n").map(String.init), "\(text)")
            status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            fields = head.dropFirst().compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                return (line[..<colon].lowercased(), value)
            }
            body = parts.dropFirst().joined(separator: "\n\n")
        }

        func values(_ name: String) -> [String] { fields.filter { $0.name == name.lowercased() }.map(\.value) }

        /// Whether the origin echoed a request field `name: value` (hypercorn's JSON pairs, or
        /// h2bad's `name: value` lines).
        func originGot(_ name: String, _ value: String) -> Bool {
            let lower = body.lowercased()
            return lower.contains("[\"\(name.lowercased())\", \"\(value.lowercased())\"]")
                || lower.contains("\n\(name.lowercased()): \(value.lowercased())\n")
                || lower.hasPrefix("\(name.lowercased()): \(value.lowercased())\n")
        }

        func originGot(_ name: String) -> Bool {
            let lower = body.lowercased()
            return lower.contains("[\"\(name.lowercased())\", ") || lower.contains("\n\(name.lowercased()): ")
        }
    }

    /// `/secured`, then `/secured?status=404`, as the client of `legs` sees them: curl, or for an
    /// HTTP/2 client of an HTTP/1.1-only origin Python h2 offering only h2 (curl offers both in
    /// ALPN, and the proxy offers a client what the origin chose).
    private func fetch(_ legs: Legs, through proxy: ProxyHarness, from origin: HTTP2Origin) throws -> [Printed] {
        guard legs == .http2ToHTTP1 else {
            return try ["/secured", "/secured?status=404"].map { path in
                let result = try proxy.curl([legs.curlFlag, "-i", origin.url(path)])
                #expect(result.status == 0, "\(result.output)")
                return try Printed(result.stdout)
            }
        }
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/secured",
                                    extra: ["--then", "/secured?status=404"])
        #expect(json.alpn == "h2", "\(json)")
        return json.responses.map { response in
            let fields = response.headers.map { ($0.first?.lowercased() ?? "", $0.last ?? "") }
            return Printed(status: response.status ?? 0, fields: fields, body: response.body)
        }
    }

    @Test(arguments: Legs.allCases)
    func responsesAreModifiedOnEveryPairingOfVersions(_ legs: Legs) throws {
        let origin = try HTTP2Origin(legs.origin)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let rules = try MapRules(remote: [], local: [], headers: Self.rules)
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = rules
        })
        let fetched = try fetch(legs, through: proxy, from: origin)
        #expect(fetched.count == 2)
        for (printed, status) in zip(fetched, [200, 404]) {
            #expect(printed.status == status, "\(printed)")
            // No filter: the request and the response.
            #expect(printed.originGot("X-Both", "yes"), "\(printed)")
            #expect(printed.values("X-Both") == ["yes"], "\(printed)")
            // ~s: the response only; ~q: the request only.
            #expect(printed.values("Cache-Control") == ["no-store"], "\(printed)")
            #expect(!printed.originGot("Cache-Control"), "\(printed)")
            #expect(printed.originGot("X-Request-Only", "1") && printed.values("X-Request-Only").isEmpty,
                    "\(printed)")
            // ~c 404: the 404 only, never a request.
            #expect(printed.values("X-Not-Found") == (status == 404 ? ["1"] : []), "\(printed)")
            #expect(!printed.originGot("X-Not-Found"), "\(printed)")
            // An empty value removes the origin's header.
            #expect(printed.values("Strict-Transport-Security").isEmpty, "\(printed)")
            #expect(printed.values("Content-Security-Policy").isEmpty, "\(printed)")
        }
        let flows = proxy.flows(count: 2)
        let flow = try #require(flows.first { $0.request?.url == origin.url("/secured?status=404") }, "\(flows)")
        #expect((flow.h2 != nil) == (legs.curlFlag == "--http2"), "\(flow)")
        #expect(flow.response?.httpVersion == (legs.origin == .hypercornHTTP1 ? "HTTP/1.1" : "HTTP/2"), "\(flow)")
        let mapped = try #require(flow.mapped, "\(flow)")
        #expect(mapped.rule == "modify-headers" && mapped.by == [])
        let changes = (mapped.headers ?? []).map { "\($0.on ?? "request") \($0.action) \($0.name)" }
        #expect(changes == ["request set X-Both", "request set X-Request-Only", "response set X-Both",
                            "response set Cache-Control", "response set X-Not-Found",
                            "response removed Strict-Transport-Security", "response removed Content-Security-Policy"],
                "\(changes)")
        #expect(mapped.headers?.first { $0.name == "X-Not-Found" }?.by == "|~c 404|X-Not-Found|1")
        // The flow's response headers are the ones the client got.
        let recorded = flow.response?.headers
        #expect(recorded?.first(named: "cache-control") == "no-store" && recorded?.first(named: "x-not-found") == "1",
                "\(String(describing: recorded))")
        #expect(recorded?.first(named: "strict-transport-security") == nil)
        #expect(recorded?.first(named: "content-security-policy") == nil)
    }

    /// Removing a header that is not there changes nothing, and the flow does not say it did: a
    /// response without `Strict-Transport-Security` and a request without `Cookie` have no
    /// `mapped` record (no ✱ in the list, no "removed" on the console line), HTTP/1.1 and HTTP/2.
    /// Before, every response read "(response headers: removed Strict-Transport-Security)".
    @Test(arguments: ["--http1.1", "--http2"])
    func removingAHeaderThatIsNotThereIsNoChange(version: String) throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let rules = try MapRules(remote: [], local: [],
                                 headers: ["|~s|Strict-Transport-Security|", "|~q|Cookie|"])
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = rules
        })
        let result = try proxy.curl([version, "-i", origin.url("/echo")])
        #expect(result.status == 0 && result.stdout.contains(" 200"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.mapped == nil, "\(String(describing: flow.mapped))")
        #expect(!ConsoleFlowPrinter.line(for: flow).contains("removed"), "\(ConsoleFlowPrinter.line(for: flow))")
        // Where the headers are there, both removals are recorded as before.
        let again = try proxy.curl([version, "-i", "-H", "Cookie: a=1", origin.url("/secured")])
        #expect(try Printed(again.stdout).values("Strict-Transport-Security").isEmpty, "\(again.output)")
        let second = try #require(proxy.flows(count: 2).first { $0.request?.url == origin.url("/secured") })
        let changes = (second.mapped?.headers ?? []).map { "\($0.on ?? "request") \($0.action) \($0.name)" }
        #expect(changes == ["request removed Cookie", "response removed Strict-Transport-Security"], "\(changes)")
    }

    /// A response-only change gets a `modify-headers` record of its own, the console line names
    /// it, and the flow log writes `on`.
    @Test func aFlowWhoseOnlyChangeWasToTheResponseIsMapped() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let rules = try MapRules(remote: [], local: [], headers: ["|~s|Strict-Transport-Security|"])
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.mapRules = rules
        })
        let result = try proxy.curl(["-i", origin.url("/secured")])
        #expect(try Printed(result.stdout).values("Strict-Transport-Security").isEmpty, "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        let url = origin.url("/secured")
        #expect(flow.mapped == Flow.Mapping(rule: "modify-headers", from: url, to: url, by: [], headers: [
            Flow.HeaderChange(name: "Strict-Transport-Security", action: "removed",
                              by: "|~s|Strict-Transport-Security|", on: "response"),
        ]))
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (response headers: removed Strict-Transport-Security)"),
                "\(ConsoleFlowPrinter.line(for: flow))")
        let json = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(json.contains(#""name":"Strict-Transport-Security","on":"response""#), "\(json)")
    }

    /// The filter is asked of the flow as it stands (mitmproxy): before a response `~s`, `~c`,
    /// `~hs` and `~ts` fail and `~q` passes; after, `~q` fails; `~h` and `~t` search both heads.
    @Test func filtersAreAskedOfTheFlowAsItStands() throws {
        func filter(_ text: String) throws -> MapRequestFilter {
            try MapRequestFilter(parsing: text, option: "--modify-headers", allowingResponse: true)
        }
        let request = LocalRequest(method: "GET", url: "https://a.test/x", httpVersion: "HTTP/1.1",
                                   headers: [("Accept", "text/html")])
        let response = MapRequestFilter.ResponseHead(status: 404, headers: [("Content-Type", "application/json"),
                                                                            ("Server", "nginx")])
        let cases: [(String, Bool, Bool)] = [
            ("~q", true, false), ("~s", false, true), ("~c 404", false, true), ("~c 200", false, false),
            ("!~c 404", true, false), ("~hs nginx", false, true), ("~ts json", false, true), ("~h nginx", false, true),
            ("~h accept", true, true), ("~t json", false, true), ("~d a.test & ~s", false, true),
        ]
        for (text, onRequest, onResponse) in cases {
            #expect(try filter(text).matches(request) == onRequest, "\(text)")
            #expect(try filter(text).matches(request, response: response) == onResponse, "\(text)")
        }
        #expect(throws: ConfigurationError.self) { try filter("~b secret") }
    }

    /// The map rules that decide before the request is sent keep refusing response terms.
    @Test func mapRulesStillRefuseResponseTerms() throws {
        for (option, make) in [("--map-remote", { try MapRules(remote: ["|~s|a|b"], local: []) }),
                               ("--map-local", { try MapRules(remote: [], local: ["|~c 200|a|/tmp"]) }),
                               ("--block-list", { try MapRules(remote: [], local: [], block: ["|~hs x|403"]) })] {
            #expect(throws: ConfigurationError.self, "\(option)") { _ = try make() }
        }
        #expect(throws: ConfigurationError.self) {
            try MapRequestFilter(parsing: "~s", option: "--intercept")
        }
    }
}
