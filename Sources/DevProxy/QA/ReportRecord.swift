import Foundation
import PinningPolicy

/// One captured pin-failure report, as `reports.jsonl` stores it: where and when it arrived,
/// the report's own fields under their report names, and the engineer whose intermediate
/// signed the chain the app saw.
public struct ReportRecord: Codable, Sendable, Equatable {
    /// The report's shape.
    public enum Kind: String, Codable, Sendable {
        /// TrustKit (iOS or Android): app fields plus `validation-result`.
        case trustKit = "trustkit"
        /// An RFC 7469 §3 HPKP report.
        case rfc7469
        /// A request to a `--report-uri` URL whose body is neither shape.
        case unknown
    }

    /// Who signed the validated chain, from `CAStore.trace`.
    public struct Signer: Codable, Sendable, Equatable {
        public var serial: String
        public var email: String?
        /// The chain came from the CA's QA alternate root (the `unpinned` persona's), not its
        /// team root: no engineer's intermediate (it read "not this CA").
        public var qaAlternateRoot: Bool?

        public init(serial: String, email: String?, qaAlternateRoot: Bool? = nil) {
            self.serial = serial
            self.email = email
            self.qaAlternateRoot = qaAlternateRoot
        }

        enum CodingKeys: String, CodingKey {
            case serial, email
            case qaAlternateRoot = "qa_alternate_root"
        }
    }

    public var id: String
    public var flowID: String
    /// RFC 3339 with milliseconds, UTC: when the flow ended.
    public var received: String
    public var url: String
    public var kind: Kind
    public var hostname: String?
    public var port: Int?
    public var notedHostname: String?
    public var includeSubdomains: Bool?
    public var enforcePinning: Bool?
    /// TrustKit's `TSKTrustEvaluationResult` (0–5).
    public var validationResult: Int?
    public var knownPins: [String]?
    public var knownPinsExpirationDate: String?
    public var appBundleID: String?
    public var appPlatform: String?
    public var dateTime: String?
    public var validatedCertificateChain: [String]?
    /// nil when the chain is not from this CA (or no CA was given); encoded as an explicit null.
    public var signer: Signer?
    /// `pin-check` for the report `devproxy pin-check --send-reports` posted itself (its
    /// `User-Agent`), not an app: `qa verdict` leaves it out.
    public var probe: String? = nil

    enum CodingKeys: String, CodingKey {
        case id, received, url, kind, hostname, port, signer, probe
        case flowID = "flow_id", notedHostname = "noted-hostname", includeSubdomains = "include-subdomains"
        case enforcePinning = "enforce-pinning", validationResult = "validation-result", knownPins = "known-pins"
        case knownPinsExpirationDate = "known-pins-expiration-date", appBundleID = "app-bundle-id"
        case appPlatform = "app-platform", dateTime = "date-time", validatedCertificateChain = "validated-certificate-chain"
    }

    public init(id: String, flowID: String, received: String, url: String, kind: Kind) {
        (self.id, self.flowID, self.received, self.url, self.kind) = (id, flowID, received, url, kind)
    }

    /// Fills the report fields from a parsed report.
    public mutating func fill(from report: PinFailureReport) {
        switch report {
        case .trustKit(let trustKit):
            kind = .trustKit
            (hostname, port, notedHostname) = (trustKit.hostname, trustKit.port, trustKit.notedHostname)
            (includeSubdomains, enforcePinning) = (trustKit.includeSubdomains, trustKit.enforcePinning)
            (validationResult, knownPins) = (trustKit.validationResult, trustKit.knownPins)
            knownPinsExpirationDate = trustKit.knownPinsExpirationDate
            (appBundleID, appPlatform, dateTime) = (trustKit.appBundleID, trustKit.appPlatform, trustKit.dateTime)
            validatedCertificateChain = trustKit.validatedCertificateChain
        case .rfc7469(let hpkp):
            kind = .rfc7469
            (hostname, port, notedHostname) = (hpkp.hostname, hpkp.port, hpkp.notedHostname)
            (includeSubdomains, knownPins, dateTime) = (hpkp.includeSubdomains, hpkp.knownPins, hpkp.dateTime)
            knownPinsExpirationDate = hpkp.effectiveExpirationDate
            validatedCertificateChain = hpkp.validatedCertificateChain ?? hpkp.servedCertificateChain
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(flowID, forKey: .flowID)
        try container.encode(received, forKey: .received)
        try container.encode(url, forKey: .url)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(hostname, forKey: .hostname)
        try container.encodeIfPresent(port, forKey: .port)
        try container.encodeIfPresent(notedHostname, forKey: .notedHostname)
        try container.encodeIfPresent(includeSubdomains, forKey: .includeSubdomains)
        try container.encodeIfPresent(enforcePinning, forKey: .enforcePinning)
        try container.encodeIfPresent(validationResult, forKey: .validationResult)
        try container.encodeIfPresent(knownPins, forKey: .knownPins)
        try container.encodeIfPresent(knownPinsExpirationDate, forKey: .knownPinsExpirationDate)
        try container.encodeIfPresent(appBundleID, forKey: .appBundleID)
        try container.encodeIfPresent(appPlatform, forKey: .appPlatform)
        try container.encodeIfPresent(dateTime, forKey: .dateTime)
        try container.encodeIfPresent(validatedCertificateChain, forKey: .validatedCertificateChain)
        try container.encode(signer, forKey: .signer)
        try container.encodeIfPresent(probe, forKey: .probe)
    }
}
