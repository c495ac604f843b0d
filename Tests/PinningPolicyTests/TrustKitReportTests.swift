import CertAuthority
import Foundation
import Testing
@testable import PinningPolicy

/// The TrustKit report builder, incoming-report recognition, and the rate limiter vectors.
@Suite struct TrustKitReportTests {
    static func failedEvaluation() throws -> (PinEvaluation, PinningPolicy) {
        let policy = try TrustKitPolicyParser().parse(configuration: ["TSKPinnedDomains": ["www.good.com": [
            "TSKEnforcePinning": false, "TSKReportUris": ["https://r.example/x"],
            "TSKPublicKeyHashes": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB="]]]])
        let verification = ChainVerifier(trustAnchors: [try Vectors.fixture("root_anchor")], verificationTime: Vectors.trustKitTestDate)
            .verify(chain: [try Vectors.fixture("leaf")], host: "www.good.com")
        return (PinningEvaluator.evaluate(policy: policy, host: "www.good.com", verification: verification,
                                          at: Vectors.trustKitTestDate), policy)
    }

    @Test func reportOnlyAllowsAndReportsToBothURIs() throws {
        let (evaluation, _) = try Self.failedEvaluation()
        #expect(evaluation.decision == .shouldAllowConnection && evaluation.validationResult == .failedNoMatchingPin)
        #expect(evaluation.reportURIs == ["https://r.example/x", PinningEvaluator.trustKitDefaultReportURI])
    }

    @Test func reportHasTheSixteenKeysPortZeroAndCRLFPEM() throws {
        let (evaluation, _) = try Self.failedEvaluation()
        let report = try #require(TrustKitReport.make(for: evaluation, host: "www.good.com",
                                                      app: .init(bundleID: "com.x"), at: Vectors.trustKitTestDate))
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any] ?? [:]
        #expect(Set(json.keys) == ["app-bundle-id", "app-version", "app-platform", "app-platform-version", "app-vendor-id",
                                   "trustkit-version", "date-time", "hostname", "port", "noted-hostname",
                                   "include-subdomains", "enforce-pinning", "validated-certificate-chain", "known-pins",
                                   "validation-result", "known-pins-expiration-date"])
        #expect(json["port"] as? Int == 0)
        #expect(json["known-pins-expiration-date"] is NSNull)
        #expect(json["validation-result"] as? Int == 1)
        #expect(json["date-time"] as? String == "2016-01-22T13:54:00Z")
        let chain = json["validated-certificate-chain"] as? [String] ?? []
        #expect(chain.count == 2)
        #expect(chain[0].hasPrefix("-----BEGIN CERTIFICATE-----\n") && chain[0].contains("\r\n"))
        #expect(chain[0].hasSuffix("\n-----END CERTIFICATE-----"))
        // Pins are re-encoded from their decoded bytes (TrustKit keeps NSData), so `BBB…B=`, whose
        // last character carries non-zero padding bits, comes back canonical as `BBB…A=`.
        #expect(json["known-pins"] as? [String] == ["pin-sha256=\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"",
                                                    "pin-sha256=\"BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA=\""])
        #expect(PinFailureReport.parse(try JSONEncoder().encode(report)) == .trustKit(report))
    }

    @Test func recognisesHistoricalSampleAndRFC7469Reports() throws {
        guard case .trustKit(let sample)? = PinFailureReport.parse(try Vectors.data("trustkit/sample_report.json")) else {
            Issue.record("sample_report.json not recognised"); return
        }
        #expect(sample.port == 443 && sample.validatedCertificateChain.count == 3)
        let rfc = #"{"hostname":"a.com","port":443,"known-pins":["pin-sha256=\"x\""],"served-certificate-chain":[]}"#
        #expect(PinFailureReport.parse(Data(rfc.utf8)) != nil)
        if case .trustKit? = PinFailureReport.parse(Data(rfc.utf8)) { Issue.record("RFC 7469 report taken for TrustKit's") }
        #expect(PinFailureReport.parse(Data(#"{"a":1}"#.utf8)) == nil)
    }

    /// The base report of the rate-limiter vectors.
    static func baseReport() throws -> TrustKitReport {
        let base = try #require((Vectors.trustKit()["rate_limiter"] as? [String: Any])?["base_report"] as? [String: Any])
        let chain = try (base["chain"] as? [String] ?? []).map { TrustKitReport.pem(try Vectors.fixture($0).der) }
        return TrustKitReport(appBundleID: "b", appVersion: "1", appPlatform: "IOS", appPlatformVersion: "1.0.0",
                              appVendorID: "v", trustKitVersion: "3.0.0", dateTime: "", hostname: base["hostname"] as? String ?? "",
                              port: base["port"] as? Int ?? 0, notedHostname: base["noted-hostname"] as? String ?? "",
                              includeSubdomains: false, enforcePinning: true, validatedCertificateChain: chain,
                              knownPins: base["known-pins"] as? [String] ?? [], validationResult: base["validation-result"] as? Int ?? 0,
                              knownPinsExpirationDate: nil, servedCertificateChain: nil)
    }

    /// The rate-limiter cases that are sequences (the `*_hashing_*` one is a note, tested below).
    static func rateLimiterCases() throws -> [VectorCase] {
        let cases = (try Vectors.trustKit()["rate_limiter"] as? [String: Any])?["cases"] as? [[String: Any]] ?? []
        return cases.filter { $0["sequence"] != nil }.map { VectorCase(name: $0["test"] as? String ?? "?", body: $0) }
    }

    @Test func rateLimiterVectorsPresent() throws { #expect(try Self.rateLimiterCases().count == 3) }

    @Test(arguments: try rateLimiterCases())
    func rateLimiterSequence(_ vector: VectorCase) throws {
        let report = try Self.baseReport()
        let start = Date()
        var limiter = TrustKitReportRateLimiter(createdAt: start)
        let steps = vector.body["sequence"] as? [String] ?? []
        let expected = vector.body["limited"] as? [Any] ?? []
        #expect(steps.count == expected.count && !steps.isEmpty)
        for (step, outcome) in zip(steps, expected) {
            if step.hasPrefix("<reset date") {
                limiter.lastReset = start.addingTimeInterval(-86_424)
                continue
            }
            let limited = limiter.shouldRateLimit(report, at: start)
            #expect(limited == outcome as? Bool, "\(vector.name) step \(step)")
        }
    }

    @Test func changingAnyKeyFieldIsNotLimited() throws {
        let base = try Self.baseReport()
        var variants: [TrustKitReport] = []
        for change in 0..<6 {
            var report = base
            switch change {
            case 0: report.notedHostname = "flargle.blargle.com"
            case 1: report.hostname = "flargle.blargle.com"
            case 2: report.port = 9090
            case 3: report.validatedCertificateChain = []
            case 4: report.knownPins = []
            default: report.validationResult = 5
            }
            variants.append(report)
        }
        for variant in variants {
            var limiter = TrustKitReportRateLimiter()
            let first = limiter.shouldRateLimit(base), second = limiter.shouldRateLimit(variant)
            #expect(!first && !second)
        }
        var limiter = TrustKitReportRateLimiter()
        var dated = base
        dated.dateTime = "other"
        let first = limiter.shouldRateLimit(base), second = limiter.shouldRateLimit(dated)
        #expect(!first && second, "dates are not in the key")
    }
}
