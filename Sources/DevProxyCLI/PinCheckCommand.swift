import CertAuthority
import DevProxy
import Foundation
import PinningPolicy

/// `devproxy pin-check URL --policy POLICY`: what the app decides for the chain a server
/// (or DevProxy in front of it) really presents.
enum PinCheckCommand {
    static let usage = """
    Connect to a URL, take the chain it presents, and decide as the app's pinning library would.

      devproxy pin-check https://api.acme.dev --policy Info.plist
      devproxy pin-check https://api.acme.dev --policy Info.plist --proxy 127.0.0.1:8080 --ca-file ca/root.pem
      devproxy pin-check https://api.acme.dev:8443 --policy pins.txt --resolve api.acme.dev:8443:127.0.0.1
      devproxy pin-check https://api.acme.dev --policy Info.plist --send-reports --json
      devproxy pin-check https://api.acme.dev --policy nsc.xml --res app/src/main/res    (or --res app.apk)

    The chain is verified against the system store plus each --ca-file (repeatable), with the host name checked.
    --send-reports POSTs the TrustKit pin-failure report to the policy's report URIs (through
    --proxy when given), as the app would.
    An Android config's <certificates src="@raw/…"/> anchors are read from res/raw of --res DIR or
    --res APP.apk (a policy in res/xml/ finds them alone), as `policy check` reads them.
    Exit codes: 0 allow, 1 block, 2 not pinned, 3 or more an error (4: usage; 5: uncertain, the
    decision turns on an @raw/ resource that was not read).
    """

    struct Matched: Encodable {
        let subject: String
        let issuer: String
        let pin: String
    }

    struct ChainEntry: Encodable {
        let subject: String
        let issuer: String
        let pin: String
    }

    struct JSONReport: Encodable {
        let host: String
        let port: Int
        let source: String
        let decision: String
        let result: Int?
        let reason: String
        let policyDomain: String?
        let verified: Bool
        let verifyError: String?
        let chain: [ChainEntry]
        let matchedCertificate: Matched?
        let matchedPin: String?
        let reportURIs: [String]
        let report: TrustKitReport?
        let reportsSent: [ReportPoster.Delivery]

        enum CodingKeys: String, CodingKey {
            case host, port, source, decision, result, reason, verified, chain, report
            case policyDomain = "policy_domain", verifyError = "verify_error", matchedCertificate = "matched_certificate"
            case matchedPin = "matched_pin", reportURIs = "report_uris", reportsSent = "reports_sent"
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(host, forKey: .host)
            try container.encode(port, forKey: .port)
            try container.encode(source, forKey: .source)
            try container.encode(decision, forKey: .decision)
            try container.encode(result, forKey: .result)
            try container.encode(reason, forKey: .reason)
            try container.encode(policyDomain, forKey: .policyDomain)
            try container.encode(verified, forKey: .verified)
            try container.encodeIfPresent(verifyError, forKey: .verifyError)
            try container.encode(chain, forKey: .chain)
            try container.encode(matchedCertificate, forKey: .matchedCertificate)
            try container.encode(matchedPin, forKey: .matchedPin)
            try container.encode(reportURIs, forKey: .reportURIs)
            try container.encode(report, forKey: .report)
            try container.encode(reportsSent, forKey: .reportsSent)
        }
    }

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" || raw.isEmpty {
            Output.line(usage)
            return raw.isEmpty ? 4 : 0
        }
        do {
            return try check(raw)
        } catch let error as UsageError {
            Output.error(error.message)
            return 4
        } catch let error as CommandFailure {
            Output.error(error.message)
            return 3
        } catch {
            Output.error("\(error)")
            return 3
        }
    }

    private static func check(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["policy", "proxy", "ca-file", "resolve", "res"], booleans: ["send-reports", "json"])
        guard arguments.positionals.count == 1, let url = arguments.positionals.first else {
            throw UsageError("give one URL, e.g. https://api.acme.dev")
        }
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
              let host = components.host, !host.isEmpty else {
            throw UsageError("\(url) is not an https:// URL; pinning applies to TLS only")
        }
        let port = components.port ?? 443
        guard let policyPath = arguments.value("policy") else { throw UsageError("--policy POLICY is required") }
        let policy: PinningPolicy
        let policyData: Data
        do {
            // Read once: the policy may be a pipe (`--policy <(…)`), and `--res APP.apk` needs its bytes too.
            do {
                policyData = Data(try SecureFile.contents(of: policyPath))
            } catch {
                throw PolicyError(.unreadable, "cannot read it: \(error.reason)")
            }
            policy = try PolicyLoader.load(data: policyData)
        } catch let error as PolicyError {
            throw CommandFailure("\(policyPath): \(error.reason) (check it with `devproxy policy check \(policyPath)`)")
        }
        // An Android config's `@raw/` anchors, read as `policy check` reads them: unread, a chain
        // the resource holds the root of was judged as if the app did not trust it.
        var context = EvaluationContext()
        if let resources = try AndroidResourcesOption.resolve(arguments.value("res"), policyPath: policyPath, policy: policyData,
                                                             kind: policy.source) {
            for warning in PolicyCheck.readRawResources(of: policy, from: resources, into: &context) { Output.warning(warning) }
        }
        let proxy = try arguments.value("proxy").map { try HostPort(parsing: $0) }
        let resolve = try arguments.values("resolve").map(ResolveOverride.init(parsing:))
        var extraCAs: [Certificate] = []
        // Each --ca-file adds its roots (the team root and the QA alternate root, as the device trusts both).
        for caFile in arguments.values("ca-file") {
            do {
                extraCAs += try Certificate.all(from: try SecureFile.read(caFile, what: "the CA file"))
            } catch let error as CAError {
                throw CommandFailure("\(caFile): \(error.reason)")
            }
        }
        let endpoint = Endpoint(host: host, port: port, proxy: proxy, resolve: resolve)
        let chain: [Certificate]
        do {
            chain = try ChainProbe.fetch(endpoint)
        } catch {
            throw CommandFailure("cannot get the chain of \(host):\(port)\(proxy.map { " through \($0)" } ?? ""): \(error)")
        }
        let now = Date()
        let verification = ChainVerifier(trustAnchors: extraCAs, useSystemTrustStore: true).verify(chain: chain, host: host)
        var evaluation = PinningEvaluator.evaluate(policy: policy, host: host, verification: verification, at: now, context: context)
        let dependency = PolicyCheck.unreadResourceDependency(policy: policy, host: host, verification: verification,
                                                              evaluation: evaluation, at: now, context: context)
        if let dependency { (evaluation.reason, evaluation.validationResult) = (dependency, nil) }
        let app = TrustKitReport.App(bundleID: "devproxy.pin-check", version: "", vendorID: UUID().uuidString)
        let report = policy.source == .trustKit ? TrustKitReport.make(for: evaluation, host: host, app: app, at: now) : nil
        var deliveries: [ReportPoster.Delivery] = []
        if arguments.flag("send-reports"), let report, !evaluation.reportURIs.isEmpty {
            let body = try JSONEncoder().encode(report)
            deliveries = ReportPoster(proxy: proxy, extraCAs: extraCAs, resolve: resolve)
                .post([UInt8](body), to: evaluation.reportURIs)
        }
        let decision: String
        let exitCode: Int32
        switch evaluation.decision {
        case _ where dependency != nil: (decision, exitCode) = ("uncertain", 5)
        case .shouldAllowConnection: (decision, exitCode) = ("allow", 0)
        case .shouldBlockConnection: (decision, exitCode) = ("block", 1)
        case .domainNotPinned: (decision, exitCode) = ("not_pinned", 2)
        }
        let matched = evaluation.matchedCertificate.map { Matched(subject: $0.subject, issuer: $0.issuer, pin: $0.pin) }
        let verifyError: String? = { if case .failed(let reason, _) = verification { return reason } else { return nil } }()
        if arguments.flag("json") {
            Output.json(JSONReport(
                host: host, port: port, source: policy.source.rawValue, decision: decision,
                result: evaluation.validationResult?.rawValue, reason: evaluation.reason, policyDomain: evaluation.notedHostname,
                verified: verification.isVerified, verifyError: verifyError,
                chain: chain.map { ChainEntry(subject: $0.subject, issuer: $0.issuer, pin: $0.pin) },
                matchedCertificate: matched, matchedPin: evaluation.matchedPin?.description,
                reportURIs: evaluation.reportURIs, report: report, reportsSent: deliveries))
            return exitCode
        }
        Output.line("\(host):\(port)\(proxy.map { " through \($0)" } ?? "") with the \(PolicyCommand.describe(policy.source)) policy \(policyPath)")
        Output.line()
        let result = evaluation.validationResult.map { " (validation-result \($0.rawValue))" } ?? ""
        Output.line("  decision   \(decision.replacingOccurrences(of: "_", with: " "))\(result)")
        Output.line("  why        \(evaluation.reason)")
        Output.line("  policy     \(evaluation.notedHostname ?? "no entry matches \(host)")")
        Output.line("  chain      " + (verifyError.map { "NOT trusted: \($0)" } ?? "trusted (system store\(extraCAs.isEmpty ? "" : " + --ca-file"))"))
        for (index, certificate) in (verification.path ?? chain).enumerated() {
            Output.line("    [\(index)] \(certificate.subject)")
            Output.line("        \(certificate.pin)")
        }
        if let matched, let pin = evaluation.matchedPin {
            Output.line("  matched    \(pin) (\(matched.subject))")
        }
        if report != nil {
            if evaluation.reportURIs.isEmpty {
                Output.line("  report     none: the policy has no report URI")
            } else if deliveries.isEmpty {
                Output.line("  report     the app would POST a pin-failure report to \(evaluation.reportURIs.joined(separator: ", "))")
                Output.line("             (add --send-reports to send it, --json to see it)")
            } else {
                for delivery in deliveries {
                    Output.line("  report     \(delivery.uri): " + (delivery.status.map { "HTTP \($0)" } ?? "failed: \(delivery.error ?? "")"))
                }
            }
        }
        return exitCode
    }
}
