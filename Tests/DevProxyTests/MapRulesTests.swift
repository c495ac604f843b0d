@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `--map-remote` and `--map-local` as rules: mitmproxy's syntax parsed, URLs rewritten as
/// Python's `re.sub` rewrites them, filters evaluated on the request, files looked for as
/// mitmproxy looks for them, and every mistake refused with one line naming the option.
@Suite struct MapRulesTests {
    private func request(_ url: String, method: String = "GET", headers: [(String, String)] = []) -> LocalRequest {
        LocalRequest(method: method, url: url, httpVersion: "HTTP/1.1", headers: headers.map { ($0.0, $0.1) })
    }

    @Test func theReplacementRewritesEveryMatchWithItsGroups() throws {
        let rule = try MapRemoteRule(parsing: #"|https://api\.example\.com/v1/(\w+)|http://localhost:3000/v2/\1"#)
        #expect(rule.rewrite("https://api.example.com/v1/users?id=1") == "http://localhost:3000/v2/users?id=1")
        #expect(rule.rewrite("https://www.example.com/v1/users") == nil)
        let every = try MapRemoteRule(parsing: "#a#\\g<0>\\g<0>")
        #expect(every.rewrite("http://a.test/a") == "http://aa.test/aa")
        let named = try MapRemoteRule(parsing: #":(?P<host>[a-z]+)\.test:\g<host>.example"#)
        #expect(named.rewrite("https://api.test/x") == "https://api.example/x")
        let escaped = try MapRemoteRule(parsing: #"|x|a\\b$1"#)
        #expect(escaped.rewrite("http://x/") == #"http://a\b$1/"#)
    }

    /// `~src` reads the client's address and `~dst` the URL's `host:port` (the scheme's port when
    /// it names none, an IPv6 literal in brackets), as the web UI's filters read a flow's.
    @Test func srcAndDstAskTheClientAndTheServerAddress() throws {
        var phone = request("https://api.example.com/v1/user")
        phone.client = "10.0.0.3:41234"
        var laptop = request("http://[::1]:8080/x")
        laptop.client = "127.0.0.1:50000"
        let src = try MapRequestFilter(parsing: #"~src ^10\.0\.0\.3:"#, option: "--intercept")
        #expect(src.matches(phone) && !src.matches(laptop))
        let dst = try MapRequestFilter(parsing: #"~dst ^api\.example\.com:443$"#, option: "--map-local")
        #expect(dst.matches(phone) && !dst.matches(laptop))
        let six = try MapRequestFilter(parsing: #"~dst ^\[::1\]:8080$ & !~src 10\.0\.0\."#, option: "--map-remote")
        #expect(six.matches(laptop) && !six.matches(phone))
        #expect(phone.destination == "api.example.com:443" && laptop.destination == "[::1]:8080")
        #expect(request("http://a.test/").destination == "a.test:80" && request("/relative").destination == "")
        let onResponse = try MapRequestFilter(parsing: "~src 10.0.0.3 & ~c 200", option: "--modify-headers",
                                              allowingResponse: true)
        #expect(onResponse.matches(phone, response: .init(status: 200, headers: [])))
        #expect(!onResponse.matches(laptop, response: .init(status: 200, headers: [])))
    }

    @Test func theFilterPartIsOptionalAndTheLastPartKeepsTheSeparator() throws {
        let parts = try MapRules.parts(of: "|~m GET|a|b|c", name: "--map-remote", target: "REPLACEMENT")
        #expect(parts.filter == "~m GET" && parts.regex == "a" && parts.target == "b|c")
        let bare = try MapRules.parts(of: ":example.com:localhost", name: "--map-remote", target: "REPLACEMENT")
        #expect(bare.filter == nil && bare.regex == "example.com" && bare.target == "localhost")
        let empty = try MapRules.parts(of: "||a|b", name: "--map-remote", target: "REPLACEMENT")
        #expect(empty.filter == nil && empty.regex == "a")
    }

    @Test func aRewrittenURLNamesWhereTheRequestGoes() throws {
        let plain = try #require(MapRemoteRule.destination(of: "http://LocalHost:3000/v2?x=1#frag"))
        #expect(!plain.tls && plain.host == "localhost" && plain.port == 3000 && plain.pathAndQuery == "/v2?x=1")
        #expect(plain.hostHeader == "localhost:3000")
        let secure = try #require(MapRemoteRule.destination(of: "https://[::1]?q"))
        #expect(secure.tls && secure.host == "::1" && secure.port == 443 && secure.pathAndQuery == "/?q")
        for bad in ["localhost:3000/x", "ftp://host/", "http://", "http://user@host/", "http://host:0/", "http://host:x/",
                    "http://[::1/"] {
            #expect(MapRemoteRule.destination(of: bad) == nil, "\(bad)")
        }
    }

    @Test func rulesApplyInOrderEachToTheURLTheOnesBeforeLeft() throws {
        let rules = try MapRules(remote: ["|a.test|b.test", "|~d ^b\\.test$|b.test/|c.test/x/"], local: [])
        let outcome = try #require(rules.apply(to: request("https://a.test/y")))
        #expect(outcome.record == Flow.Mapping(rule: "map-remote", from: "https://a.test/y", to: "https://c.test/x/y",
                                                by: ["|a.test|b.test", "|~d ^b\\.test$|b.test/|c.test/x/"]))
        #expect(outcome.destination?.host == "c.test" && outcome.destination?.pathAndQuery == "/x/y")
        #expect(rules.apply(to: request("https://z.test/y")) == nil)
    }

    /// A replacement that makes no http(s) URL is answered 502 naming the rule, never dialled.
    @Test func aRewriteToSomethingElseThanAURLIsA502() throws {
        let rules = try MapRules(remote: ["|https://a.test/|localhost:3000/"], local: [])
        let outcome = try #require(rules.apply(to: request("https://a.test/x")))
        #expect(outcome.destination == nil && outcome.record.to == "localhost:3000/x")
        let answer = try #require(outcome.route).answer(request("https://a.test/x"), bodyTooLong: false)
        #expect(answer.status == 502)
        // The rule's failure, not the client's: it read `bad_request`, "the client's request was malformed".
        #expect(answer.error?.kind == .ruleFailed)
        #expect(FlowErrorKind.ruleFailed.explanation == "a --map-remote or --map-local rule could not answer as written")
        #expect(String(decoding: answer.body, as: UTF8.self) == "502 Bad Gateway: --map-remote |https://a.test/|localhost:3000/ "
                + "made localhost:3000/x, which is not an http:// or https:// URL with a host\n")
    }

    @Test func theFilterIsEvaluatedOnTheRequest() throws {
        let rules = try MapRules(remote: ["|~m POST & ~hq \"x-env: staging\" & !~u /health|a.test|b.test"], local: [])
        #expect(rules.apply(to: request("http://a.test/p", method: "POST", headers: [("X-Env", "staging")])) != nil)
        #expect(rules.apply(to: request("http://a.test/p", method: "GET", headers: [("X-Env", "staging")])) == nil)
        #expect(rules.apply(to: request("http://a.test/p", method: "POST")) == nil)
        #expect(rules.apply(to: request("http://a.test/health", method: "POST", headers: [("x-env", "staging")])) == nil)
        // A filter with `|` in it takes another separator, as in mitmproxy.
        let types = try MapRules(remote: ["#~t json | ~grpc#a.test#b.test"], local: [])
        #expect(types.apply(to: request("http://a.test/", headers: [("content-type", "application/grpc")])) != nil)
        #expect(types.apply(to: request("http://a.test/", headers: [("Content-Type", "application/JSON")])) != nil)
        #expect(types.apply(to: request("http://a.test/", headers: [("Content-Type", "text/plain")])) == nil)
    }

    @Test func mapLocalServesAFileOrWhatTheURLNamesBelowADirectory() throws {
        let dir = TemporaryDirectory()
        let file = dir.write("user.json", "{\"name\":\"ana\"}")
        try FileManager.default.createDirectory(atPath: dir.file("site/css"), withIntermediateDirectories: true)
        dir.write("site/css/app.css", "body{}")
        dir.write("site/index.html", "<p>home</p>")
        dir.write("site/a_b.txt", "escaped")
        let rules = try MapRules(remote: [], local: ["|/api/user|\(file)", "|static.test/assets|\(dir.file("site"))"])
        let json = try #require(rules.apply(to: request("https://api.test/api/user?id=7")))
        #expect(json.record.rule == "map-local" && json.record.to == file && json.record.missing == nil)
        let answer = try #require(json.route).answer(request("https://api.test/api/user"), bodyTooLong: false)
        #expect(answer.status == 200 && answer.body == Array("{\"name\":\"ana\"}".utf8))
        #expect(answer.headers.contains { $0.name == "Content-Type" && $0.value == "application/json" })
        let css = try #require(rules.apply(to: request("http://static.test/assets/css/app.css?v=3")))
        #expect(css.record.to == dir.file("site/css/app.css"))
        let home = try #require(rules.apply(to: request("http://static.test/assets/")))
        #expect(home.record.to == dir.file("site/index.html"))
        let spaced = try #require(rules.apply(to: request("http://static.test/assets/a%20b.txt")))
        #expect(spaced.record.to == dir.file("site/a_b.txt"))
    }

    @Test func aMissingFileIsA404NamingEveryFileLookedFor() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("site"), withIntermediateDirectories: true)
        let rules = try MapRules(remote: [], local: ["|/assets|\(dir.file("site"))"])
        let outcome = try #require(rules.apply(to: request("http://x.test/assets/app.js")))
        #expect(outcome.record.missing == [dir.file("site/app.js"), dir.file("site/app.js/index.html")])
        let answer = try #require(outcome.route).answer(request("http://x.test/assets/app.js"), bodyTooLong: false)
        #expect(answer.status == 404)
        #expect(String(decoding: answer.body, as: UTF8.self).contains(dir.file("site/app.js")))
    }

    @Test func nothingOutsideTheDirectoryIsServed() throws {
        let dir = TemporaryDirectory()
        dir.write("secret.txt", "secret")
        try FileManager.default.createDirectory(atPath: dir.file("site"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dir.file("site/link.txt"), withDestinationPath: dir.file("secret.txt"))
        let rules = try MapRules(remote: [], local: ["|/assets/|\(dir.file("site"))"])
        for url in ["http://x.test/assets/../secret.txt", "http://x.test/assets/%2e%2e/secret.txt"] {
            let outcome = try #require(rules.apply(to: request(url)))
            let answer = try #require(outcome.route).answer(request(url), bodyTooLong: false)
            #expect(answer.status == 403, "\(url)")
        }
        let linked = try #require(rules.apply(to: request("http://x.test/assets/link.txt")))
        #expect(linked.record.missing != nil)
    }

    @Test(arguments: [
        ("x", "--map-remote x is not a rule"),
        ("|only", "--map-remote |only is not a rule"),
        ("|(|x", "is not a valid regular expression"),
        ("|~c 200|a|b", "the filter's ~c is not known before the request is sent"),
        ("|~bq secret|a|b", "the filter's ~bq is not known"),
        // A rule runs before anyone could mark the flow in the web UI.
        ("|~marked|a|b", "the filter's ~marked is not known before the request is sent"),
        ("|~mark red|a|b", "the filter's ~mark is not known before the request is sent"),
        ("|~d a & ~comment why|a|b", "the filter's ~comment is not known before the request is sent"),
        // A GraphQL call is named from its finished flow's bodies, in the store.
        ("|~graphql GetUser|a|b", "the filter's ~graphql is not known before the request is sent"),
        ("|~gqlerr|a|b", "the filter's ~gqlerr is not known before the request is sent"),
        // What a rule did is known once rules have run.
        ("|~mapped|a|b", "the filter's ~mapped is not known before the request is sent"),
        // Replays are recorded flows; a rule sees the request, whoever sent it.
        ("|~replay|a|b", "~replay selects recorded flows (the web UI's list, /api/flows)"),
        ("|~d (|a|b", "does not parse"),
        ("|(a)|\\2", "the replacement names group 2, and the regex has one"),
        ("|a|\\q", "\\q in the replacement is not a group reference"),
        ("|a|\\g<nope>", "\\g<nope> in the replacement names no group"),
    ])
    func badMapRemoteOptionsAreRefused(_ option: String, _ reason: String) {
        #expect {
            _ = try MapRules(remote: [option], local: [])
        } throws: { error in
            "\(error)".contains(reason) && "\(error)".contains("--map-remote")
        }
    }

    @Test func badMapLocalOptionsAreRefused() {
        #expect {
            _ = try MapRules(remote: [], local: ["|/x|/nonexistent/devproxy-map"])
        } throws: { "\($0)" == "--map-local |/x|/nonexistent/devproxy-map: /nonexistent/devproxy-map does not exist; give a file or a directory" }
        #expect {
            _ = try MapRules(remote: [], local: ["|~s|/x|/tmp"])
        } throws: { "\($0)".contains("~s is not known before the request is sent") }
    }

    @Test func aRelativePathIsTheWorkingDirectorysAndNoRuleCostsNothing() throws {
        let dir = TemporaryDirectory()
        dir.write("mock.json", "{}")
        let rules = try MapRules(remote: [], local: ["|/x|mock.json"], directory: dir.path)
        #expect(rules.local.first?.path == dir.file("mock.json"))
        #expect(MapRules().isEmpty && !rules.isEmpty)
    }

    @Test func theConsoleLineSaysWhatARuleDid() {
        var flow = FlowSamples.get
        flow.mapped = Flow.Mapping(rule: "map-remote", from: "https://a.test/x", to: "http://localhost:3000/x", by: ["|a|b"])
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (mapped from https://a.test/x)"))
        flow.mapped = Flow.Mapping(rule: "map-local", from: "https://a.test/x", to: "/srv/x.json", by: ["|a|/srv/x.json"])
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (map-local /srv/x.json)"))
        flow.mapped?.missing = ["/srv/x", "/srv/x/index.html"]
        #expect(ConsoleFlowPrinter.line(for: flow).hasSuffix(" (map-local: none of /srv/x, /srv/x/index.html)"))
    }

    @Test func theRecordGoesToTheFlowLogAndHAR() throws {
        var flow = FlowSamples.get
        flow.mapped = Flow.Mapping(rule: "map-remote", from: "http://a.test/", to: "http://b.test/", by: ["|a.test|b.test"])
        let line = String(decoding: flow.jsonBytes, as: UTF8.self)
        #expect(line.contains(#""mapped":{"by":["|a.test|b.test"],"from":"http://a.test/","rule":"map-remote","to":"http://b.test/"}"#),
                "\(line)")
        let decoded = try JSONDecoder().decode(Flow.self, from: Data(flow.jsonBytes))
        #expect(decoded.mapped == flow.mapped)
        let har = String(decoding: try JSONEncoder().encode(HARWriter.entry(for: flow)), as: UTF8.self)
        #expect(har.contains(#""_mapped":{"#), "\(har)")
    }
}
