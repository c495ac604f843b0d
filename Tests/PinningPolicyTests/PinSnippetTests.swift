import CertAuthority
import Foundation
import PinningPolicy
import Testing

/// `PinSnippet` output read back by our own TrustKit, NSC and OkHttp parsers: the domain, the
/// flags and both pins survive the round trip.
@Suite struct PinSnippetTests {
    static let root = Data(repeating: 1, count: 32).base64EncodedString()
    static let backup = Data(repeating: 2, count: 32).base64EncodedString()

    func snippet(reportOnly: Bool = false) -> PinSnippet {
        PinSnippet(domain: "api.acme.dev", includeSubdomains: true,
                   pins: [.init(base64: Self.root, comment: "team root -- test"), .init(base64: Self.backup, comment: "backup")],
                   reportURIs: ["https://reports.acme.dev/pins?a=1&b=2"], reportOnly: reportOnly, expiration: "2030-01-31")
    }

    var expectedPins: [Pin] { [Pin(sha256Base64: Self.root)!, Pin(sha256Base64: Self.backup)!] }

    @Test func trustKitPlistRoundTrips() throws {
        let policy = try TrustKitPolicyParser().parse(Data(snippet(reportOnly: true).render(.trustKitPlist).utf8))
        let entry = try #require(policy[pattern: "api.acme.dev"])
        #expect(entry.pins == expectedPins)
        #expect(entry.includeSubdomains && !entry.enforce)
        #expect(entry.reportURIs == ["https://reports.acme.dev/pins?a=1&b=2"])
        #expect(entry.expiration == ISO8601DateFormatter().date(from: "2030-01-31T00:00:00Z"))
    }

    @Test func nscRoundTrips() throws {
        let policy = try AndroidNSCParser(timeZone: TimeZone(identifier: "UTC")!).parse(Data(snippet().render(.nsc).utf8))
        let entry = try #require(policy[pattern: "api.acme.dev"])
        #expect(entry.pins == expectedPins && entry.includeSubdomains)
        #expect(entry.trustAnchors.contains { $0.store == .user }, "the team root is a user CA on Android")
    }

    @Test func okHttpRoundTrips() throws {
        let policy = try OkHttpPinnerParser().parse(snippet().render(.okHttp))
        #expect(policy.domains.map(\.pattern) == ["**.api.acme.dev"])
        #expect(policy.entries(for: "api.acme.dev").flatMap(\.pins) == expectedPins)
        // OkHttp 3.x reads `**.` literally and pins nothing: the snippet says so.
        #expect(snippet().render(.okHttp).contains("needs OkHttp 4.x; on 3.x it matches nothing"))
    }

    @Test func swiftSnippetCarriesEveryKeyAndPin() {
        let text = snippet().render(.trustKit)
        // Without swizzling, TrustKit sees only the challenges the app's delegate hands it.
        #expect(text.contains("pinningValidator.handle(challenge, completionHandler: completionHandler)"))
        for needle in ["kTSKIncludeSubdomains: true", "kTSKEnforcePinning: true", "kTSKExpirationDate: \"2030-01-31\"",
                       "\"\(Self.root)\", // team root", "\"\(Self.backup)\", // backup"] {
            #expect(text.contains(needle), "\(needle)")
        }
    }

    @Test func warningsFollowEachLibrary() {
        let single = PinSnippet(domain: "a.dev", pins: [.init(base64: Self.root, comment: "root")])
        #expect(single.warnings(for: .trustKit).first?.contains("fewer than two pins") == true)
        #expect(single.warnings(for: .nsc).first?.contains("strongly advise a backup") == true)
        #expect(snippet(reportOnly: true).warnings(for: .okHttp).count == 3)
        #expect(snippet().warnings(for: .trustKitPlist).isEmpty)
    }
}
