import Testing
@testable import PinningPolicy

/// TrustKit's lookup quirks from spec §2.3 beyond the vectors.
@Suite struct TrustKitDomainMatcherTests {
    let matcher = TrustKitDomainMatcher()

    func entries(_ names: [(String, Bool)]) -> [PinnedDomain] {
        names.map { PinnedDomain(pattern: $0.0, includeSubdomains: $0.1, source: .trustKit) }
    }

    @Test(arguments: [
        ("x.a.a.com", "a.a.com"), ("a.a.a.com", "a.a.com"), ("x.a.a.a.com", nil),
        ("WWW.GOOD.COM", nil), ("www.Good.com", nil), ("www.good.com.", nil), (".good.com", "good.com"),
        ("x.unsecured.good.com", "good.com"), ("xgood.com", nil),
    ] as [(String, String?)])
    func splitBasedCaseSensitiveMatching(_ host: String, _ expected: String?) {
        let domains = entries([("a.a.com", true), ("good.com", true)])
            + [PinnedDomain(pattern: "unsecured.good.com", excludedFromParent: true, source: .trustKit)]
        #expect(matcher.lookup(host, in: domains)?.pattern == expected)
    }

    @Test func parentWithoutIncludeSubdomainsNeverCovers() {
        let domains = entries([("good.com", true), ("www.good.com", false)])
        #expect(matcher.lookup("foo.www.good.com", in: domains)?.pattern == "good.com")
    }
}
