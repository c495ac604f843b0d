import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// OkHttp `CertificatePinner` pattern rules (spec §5.1, OkHttp `CertificatePinnerTest.kt`) and
/// the two input forms.
@Suite struct OkHttpPinnerParserTests {
    /// A pin of GoodRootCA's key.
    static let pin = "sha256/S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo="

    @Test(arguments: [
        ("example.com", "example.com", true), ("example.com", "www.example.com", false),
        ("www.example.com", "us.www.example.com", false), ("example.com", "EXAMPLE.com", true),
        ("*.example.com", "a.example.com", true), ("*.example.com", "example.com", false),
        ("*.example.com", "a.b.example.com", false), ("**.example.com", "example.com", true),
        ("**.example.com", "a.b.example.com", true), ("**.example.co.uk", "anotherexample.co.uk", false),
        ("*.example.com", "aexample.com", false),
        // OkHttp's canonical host keeps a trailing dot (`containsInvalidLabelLengths`: "Trailing '.'
        // is allowed"), so an absolute name is a different host to the pinner. DevProxy dropped it
        // and predicted `api.example.com.` pinned where OkHttp leaves it unpinned.
        ("example.com", "example.com.", false), ("example.com.", "example.com.", true),
        ("example.com.", "example.com", false), ("*.example.com", "a.example.com.", false),
        ("**.example.com", "example.com.", false), ("**.example.com.", "a.b.example.com.", true),
        ("*.example.com.", "a.example.com.", true),
        // IPv6 literals are canonicalised as OkHttp's toCanonicalHost does (DevProxy refused them as
        // "Invalid pattern", so a pinner of an address was called one OkHttp throws on).
        ("[::1]", "::1", true), ("0:0:0:0:0:0:0:1", "[::1]", true), ("2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1", true),
        ("::ffff:127.0.0.1", "127.0.0.1", true), ("::1", "::2", false),
    ])
    func patternMatching(_ pattern: String, _ host: String, _ expected: Bool) throws {
        #expect(try OkHttpPattern(pattern).matches(host) == expected)
    }

    @Test(arguments: ["a.*.example.com", "*example.com", "https://example.com/", "example.com:443", "***.example.com",
                      "example.com..", ".", "*.::1", "**.[::1]", "1::2::3", "[::1"])
    func rejectsInvalidPatterns(_ pattern: String) {
        #expect(throws: PolicyError.self) { try OkHttpPattern(pattern) }
    }

    @Test func parsesChainedKotlinSource() throws {
        let source = """
        val pinner = CertificatePinner.Builder()
            .add("api.example.com",
                 "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                 "sha1/TEF4rzaX+BAha8UD6atiCYtJnfM=")
            .add("**.example.com", BuildConfig.PIN)
            .add("*.cdn.example.com", "sha256/S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=")
            .build()
        """
        let policy = try PolicyLoader.load(data: Data(source.utf8))
        #expect(policy.source == .okHttp)
        #expect(policy.domains.map(\.pattern) == ["api.example.com", "**.example.com", "*.cdn.example.com"])
        #expect(policy.domains[0].pins.map(\.description) == ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                                                              "sha1/TEF4rzaX+BAha8UD6atiCYtJnfM="])
        #expect(!policy.warnings.isEmpty, "BuildConfig.PIN is not a literal")
        #expect(policy.entries(for: "api.example.com").count == 2, "patterns are pooled")
    }

    /// Every way Kotlin and Java code calls the builder's `add`: chained, on a variable, and bare
    /// inside a scope function. DevProxy looked for `.add(` only, so a Kotlin
    /// `CertificatePinner.Builder().apply { add(…) }.build()` read as "no pins found", every host
    /// predicted not pinned where OkHttp pins it. A function whose name merely ends in `add` is
    /// not the builder's.
    @Test(arguments: [
        ("chained", "CertificatePinner.Builder()\n    .add(\"api.example.com\", \"\(pin)\")\n    .build()", 1),
        ("Kotlin apply", "CertificatePinner.Builder().apply {\n    add(\"api.example.com\", \"\(pin)\")\n}.build()", 1),
        ("Kotlin also", "CertificatePinner.Builder().also { it.add(\"api.example.com\", \"\(pin)\") }.build()", 1),
        ("Java variable", "CertificatePinner.Builder b = new CertificatePinner.Builder();\nb.add(\"api.example.com\", \"\(pin)\");\n"
         + "CertificatePinner p = b.build();", 1),
        ("not add itself", "CertificatePinner.Builder().apply { readd(\"api.example.com\", \"\(pin)\") }.build()", 0),
    ])
    func readsEveryFormOfAddInSource(_ label: String, _ source: String, _ pinned: Int) throws {
        let policy = try OkHttpPinnerParser().parse(source)
        #expect(policy.entries(for: "api.example.com").flatMap(\.pins).count == pinned, "\(label): \(policy.warnings)")
    }

    @Test func parsesPinListAndPoolsPatterns() throws {
        let text = "# pins\nwww.good.com sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n**.good.com sha256/S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=\n"
        let policy = try OkHttpPinnerParser().parse(text)
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: Vectors.trustKitTestDate)
            .verify(chain: [try Vectors.fixture("leaf")], host: "www.good.com")
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: "www.good.com", verification: verification,
                                                   at: Vectors.trustKitTestDate)
        #expect(evaluation.decision == .shouldAllowConnection)
        #expect(evaluation.matchedPin?.base64 == "S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=")
    }

    @Test func sha1PinOfLeafMatchesAndWrongPinBlocks() throws {
        let leaf = try Vectors.fixture("leaf")
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: Vectors.trustKitTestDate)
            .verify(chain: [leaf], host: "www.good.com")
        let good = try OkHttpPinnerParser().parse("*.good.com sha1/xQ4BMmkVhwAdTOn0ECs3ysHCd/U=")
        let bad = try OkHttpPinnerParser().parse("*.good.com sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        #expect(PinningEvaluator.evaluate(policy: good, host: "www.good.com", verification: verification, at: Date()).connects)
        let blocked = PinningEvaluator.evaluate(policy: bad, host: "www.good.com", verification: verification, at: Date())
        #expect(blocked.decision == .shouldBlockConnection && blocked.validationResult == .failedNoMatchingPin)
    }

    @Test func pinErrorsAndUncheckedLength() throws {
        #expect(throws: PolicyError.self) { try OkHttpPinnerParser().parse("a.com sha512/AAAA") }
        #expect(throws: PolicyError.self) { try OkHttpPinnerParser().parse("a.com sha256/!!!!") }
        // OkHttp does not validate the decoded length: a truncated pin is accepted.
        #expect(try OkHttpPinnerParser().parse("a.com sha256/AAAA").domains.first?.pins.first?.digest.count == 3)
    }

    /// An IPv6 pattern prints as OkHttp's `Pin.pattern` holds it: RFC 5952 text, an IPv4-mapped
    /// address as IPv4.
    @Test(arguments: [("[0:0::1]", "::1"), ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
                      ("1:0:0:2:0:0:0:3", "1:0:0:2::3"), ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"), ("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"),
                      ("::ffff:10.0.0.1", "10.0.0.1")])
    func ipv6PatternsAreCanonical(_ pattern: String, _ canonical: String) throws {
        #expect(try OkHttpPattern(pattern).description == canonical)
    }

    /// `.add(pattern)` with no pin constructs no `CertificatePinner.Pin`: OkHttp pins nothing for
    /// the pattern and never validates it. DevProxy kept a pin-less entry, so the host was
    /// predicted `block` ("Certificate pinning failure!") where OkHttp connects, and a pattern
    /// such as a URL was refused. Pins written as expressions DevProxy cannot read still pin.
    @Test(arguments: [
        ("pin list, pattern alone", "api.example.com\n", "api.example.com", TrustDecision.domainNotPinned),
        ("source, .add(pattern)", "CertificatePinner.Builder().add(\"api.example.com\").build()", "api.example.com",
         .domainNotPinned),
        ("source, a URL with no pin", "CertificatePinner.Builder().add(\"https://api.example.com/\").build()",
         "api.example.com", .domainNotPinned),
        ("source, pins unreadable", "CertificatePinner.Builder().add(\"api.example.com\", BuildConfig.PIN).build()",
         "api.example.com", .shouldBlockConnection),
        ("pooled with a pin-less pattern", "CertificatePinner.Builder().add(\"**.example.com\")"
         + ".add(\"api.example.com\", \"sha256/S5z3Fz5ZfZAGJOBZjK6TYBquyLLKO+BndKXBlL3nPjo=\").build()",
         "api.example.com", .shouldAllowConnection),
    ])
    func anAddWithNoPinPinsNothing(_ label: String, _ text: String, _ host: String, _ expected: TrustDecision) throws {
        let policy = try OkHttpPinnerParser().parse(text)
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: Vectors.trustKitTestDate)
            .verify(chain: [try Vectors.fixture("leaf")], host: nil)
        let evaluation = PinningEvaluator.evaluate(policy: policy, host: host, verification: verification, at: Vectors.trustKitTestDate)
        #expect(evaluation.decision == expected, "\(label): \(evaluation.reason)")
        if expected == .domainNotPinned {
            #expect(policy.warnings.contains { $0.contains("no pin is given") }, "\(label): \(policy.warnings)")
        }
    }
}
