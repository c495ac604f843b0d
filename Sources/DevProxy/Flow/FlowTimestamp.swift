import CertAuthority
import Foundation

/// Durations between the RFC 3339 timestamps of flow records.
enum FlowTimestamp {
    /// Milliseconds from `started` to `ended`, or `nil` when either does not parse.
    static func milliseconds(from started: String, to ended: String) -> Double? {
        guard let start = ISO8601.date(started), let end = ISO8601.date(ended) else { return nil }
        return (end.timeIntervalSince(start) * 1000).rounded()
    }
}
