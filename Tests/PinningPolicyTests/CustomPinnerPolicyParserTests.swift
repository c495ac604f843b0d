import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// Parsing of `custom` policy files: the reference articles' pinners, every key's validation,
/// and the loader recognising the kind.
@Suite struct CustomPinnerPolicyParserTests {
    static func fixture(_ name: String) throws -> Data {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<2 { url.deleteLastPathComponent() }
        return try Data(contentsOf: url.appendingPathComponent("Fixtures/custom/\(name)"))
    }

    func parse(_ object: [String: Any]) throws -> PinningPolicy {
        try CustomPinnerPolicyParser().parse(try JSONSerialization.data(withJSONObject: object))
    }

    static var base: [String: Any] { ["kind": "custom", "hash": "spki", "scope": "any", "hosts": ["api.acme.dev"],
                                      "pins": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]] }

    func error(_ changes: [String: Any?]) -> PolicyError? {
        var object = Self.base
        for (key, value) in changes { object[key] = value }
        do {
            _ = try parse(object)
            return nil
        } catch let error as PolicyError {
            return error
        } catch {
            return nil
        }
    }

    @Test func articlePinnersParseWithTheirFormAndScope() throws {
        let turkish = try PolicyLoader.load(data: try Self.fixture("certificate-pinner.json"))
        #expect(turkish.source == .custom)
        #expect(turkish.customPinner?.hash == .rawKey && turkish.customPinner?.scope == .any)
        #expect(turkish.customPinner?.name == "CertificatePinner")
        #expect(turkish.domains.map(\.pattern) == ["api.example.com"])
        #expect(turkish.domains.first?.pins.count == 2)
        let spanish = try PolicyLoader.load(data: try Self.fixture("pinning-delegate.json"))
        #expect(spanish.customPinner?.hash == .trustKit && spanish.customPinner?.scope == .leaf)
        #expect(spanish.customPinner?.pins.first?.base64 == "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg=")
    }

    @Test func unknownHashIsRefusedNamingTheChoices() throws {
        #expect(PolicyLoader.detect(try Self.fixture("unknown-hash.json")) == .custom)
        #expect(throws: PolicyError(.invalidValue, "unknown hash \"md5\"; use one of spki, raw-key, trustkit, certificate")) {
            try PolicyLoader.load(data: try Self.fixture("unknown-hash.json"))
        }
    }

    @Test func eachKeyIsValidated() {
        #expect(error(["scope": "root"])?.reason == "unknown scope \"root\"; use one of any, leaf, ca")
        #expect(error(["hash": nil])?.reason == "\"hash\" (a string) is required")
        #expect(error(["hosts": []])?.code == .invalidValue)
        #expect(error(["hosts": ["api .acme.dev"]])?.code == .invalidDomain)
        #expect(error(["hosts": ["*acme.dev"]])?.code == .invalidDomain)
        #expect(error(["pins": []])?.code == .tooFewPins)
        #expect(error(["pins": ["AAAA"]])?.code == .invalidPin)
        #expect(error(["pins": ["sha1/AAAAAAAAAAAAAAAAAAAAAAAAAAA="]])?.code == .invalidPin)
        #expect(error(["enforce": "yes"])?.reason == "\"enforce\" must be true or false")
        #expect(error(["hashes": ["x"]])?.reason.hasPrefix("unknown key \"hashes\"") == true)
        #expect(error(["_note": "comments are fine"]) == nil)
    }

    @Test func sha256PrefixAndBareBase64AreTheSamePinAndDuplicatesGo() throws {
        let pin = "YLh1dUR9y6Kja30RrAn7JKnbQG/uEtLMkBgFF2Fuihg="
        var object = Self.base
        object["pins"] = [pin, "sha256/" + pin, "Vjs8r4z+80wjNcr1YKepWQkMm1KFkb/9oOSYKzEYQAU="]
        let policy = try parse(object)
        #expect(policy.customPinner?.pins.map(\.base64) == [pin, "Vjs8r4z+80wjNcr1YKepWQkMm1KFkb/9oOSYKzEYQAU="])
        #expect(policy.customPinner?.enforce == true)
    }

    @Test func hostPatternsMatchExactWildcardAndAll() throws {
        var object = Self.base
        object["hosts"] = ["API.acme.dev", "*.cdn.acme.dev"]
        let policy = try parse(object)
        #expect(policy.entry(for: "api.acme.dev")?.pattern == "API.acme.dev")
        #expect(policy.entry(for: "api.acme.dev.")?.pattern == "API.acme.dev")
        #expect(policy.entry(for: "a.b.cdn.acme.dev")?.pattern == "*.cdn.acme.dev")
        #expect(policy.entry(for: "cdn.acme.dev") == nil)
        #expect(policy.entry(for: "www.api.acme.dev") == nil)
        #expect(CustomPinner.matches("*", "anything.example"))
    }

    @Test func aTrustKitJSONIsStillTrustKit() throws {
        let data = Data(#"{"TSKPinnedDomains": {"a.dev": {"TSKPublicKeyHashes": []}}}"#.utf8)
        #expect(PolicyLoader.detect(data) == .trustKit)
    }

    /// A custom policy with a syntax error is still read as one, and the error says where it is:
    /// it was read as a TrustKit policy ("the TrustKit library refuses this policy") with
    /// Foundation's `Error Domain=NSCocoaErrorDomain Code=3840 … around character 36`.
    @Test func brokenJSONSaysWhereAndStaysCustom() throws {
        let data = Data("{\"kind\": \"custom\",\n  \"hash\": \"spki\",,\n}".utf8)
        #expect(PolicyLoader.detect(data) == .custom)
        #expect(throws: PolicyError(.unreadable, "a custom policy must be one JSON object; this is not valid JSON "
                                    + "(line 2, column 18: invalid value)")) {
            try PolicyLoader.load(data: data)
        }
        let trustKit = Data("{\"TSKPinnedDomains\": {\"a.dev\": }}".utf8)
        #expect(throws: PolicyError(.unreadable, "the TrustKit configuration is not valid JSON "
                                    + "(line 1, column 32: invalid value)")) {
            try PolicyLoader.load(data: trustKit)
        }
    }
}
