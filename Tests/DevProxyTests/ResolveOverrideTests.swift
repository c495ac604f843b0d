import DevProxy
import Testing

/// `--resolve HOST:PORT:ADDRESS`, exact and `*.` entries.
@Suite struct ResolveOverrideTests {
    @Test func exactEntriesMatchHostAndPortIgnoringCase() throws {
        let overrides = [try ResolveOverride(parsing: "API.example.com:443:10.0.0.7")]
        #expect(overrides.address(host: "api.example.com", port: 443) == "10.0.0.7")
        #expect(overrides.address(host: "Api.Example.COM", port: 443) == "10.0.0.7")
        #expect(overrides.address(host: "api.example.com", port: 8443) == "api.example.com")
        #expect(overrides.address(host: "www.example.com", port: 443) == "www.example.com")
    }

    @Test func wildcardCoversNamesBelowItsParentButNotTheParent() throws {
        let overrides = [try ResolveOverride(parsing: "*.bench.local:8443:127.0.0.1")]
        #expect(overrides.address(host: "a.bench.local", port: 8443) == "127.0.0.1")
        #expect(overrides.address(host: "x.y.bench.local", port: 8443) == "127.0.0.1")
        #expect(overrides.address(host: "bench.local", port: 8443) == "bench.local")
        #expect(overrides.address(host: "evilbench.local", port: 8443) == "evilbench.local")
        #expect(overrides.address(host: "a.bench.local", port: 443) == "a.bench.local")
    }

    /// `*` matches as in `--passthrough`, anywhere in the host.
    @Test func aStarInsideTheHostMatchesLikePassthrough() throws {
        let overrides = [try ResolveOverride(parsing: "api-*.acme.test:443:10.0.0.3")]
        #expect(overrides.address(host: "api-eu.acme.test", port: 443) == "10.0.0.3")
        #expect(overrides.address(host: "web-eu.acme.test", port: 443) == "web-eu.acme.test")
    }

    @Test func anExactEntryWinsOverAWildcardWhateverTheOrder() throws {
        let overrides = [try ResolveOverride(parsing: "*.acme.test:443:10.0.0.1"),
                         try ResolveOverride(parsing: "api.acme.test:443:10.0.0.2")]
        #expect(overrides.address(host: "api.acme.test", port: 443) == "10.0.0.2")
        #expect(overrides.address(host: "www.acme.test", port: 443) == "10.0.0.1")
    }

    @Test(arguments: ["", "host", "host:80", "host:x:1.2.3.4", "host:0:1.2.3.4", ":80:1.2.3.4", "host:80:"])
    func malformedEntriesAreRefused(_ text: String) {
        #expect(throws: ConfigurationError.self) { try ResolveOverride(parsing: text) }
    }
}
