import Foundation

/// TrustKit's report rate limiter (`Reporting/TSKReportsRateLimiter.m`): a report whose key was
/// already seen is dropped; the whole cache is cleared lazily once more than 24 h have passed
/// since the last clear (a fixed bucket, not a per-entry TTL). In memory, per app launch.
public struct TrustKitReportRateLimiter: Sendable {
    /// The fields that make two reports "the same"; dates and app fields are not among them.
    private struct Key: Hashable {
        let notedHostname: String, hostname: String, port: Int
        let chain: [String], knownPins: [String], validationResult: Int
    }

    private var seen = Set<Key>()
    /// When the cache was last cleared (initially: when the reporter was created).
    public var lastReset: Date

    /// A limiter created at `date`.
    public init(createdAt date: Date = Date()) {
        lastReset = date
    }

    /// True when `report` must not be sent; records it otherwise.
    public mutating func shouldRateLimit(_ report: TrustKitReport, at date: Date = Date()) -> Bool {
        if date.timeIntervalSince(lastReset) > 86_400 {
            seen.removeAll()
            lastReset = date
        }
        let key = Key(notedHostname: report.notedHostname, hostname: report.hostname, port: report.port,
                      chain: report.validatedCertificateChain, knownPins: report.knownPins,
                      validationResult: report.validationResult)
        return !seen.insert(key).inserted
    }
}
