import CertAuthority
import Foundation
import Testing

/// The hand-written RFC 3339 formatter and parser agree with Foundation's ICU-backed
/// ISO8601DateFormatter, which the proxy no longer calls on its hot path.
@Suite struct ISO8601Tests {
    private static func reference(fraction: Bool) -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = fraction ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter
    }

    @Test func knownInstants() {
        #expect(ISO8601.string(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ISO8601.milliseconds(Date(timeIntervalSince1970: 0.5)) == "1970-01-01T00:00:00.500Z")
        #expect(ISO8601.milliseconds(Date(timeIntervalSince1970: 1_796_036_607.045)) == "2026-11-30T11:03:27.045Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: 253_402_300_799)) == "9999-12-31T23:59:59Z")
    }

    /// An instant no clock gives (an imported HAR's `time` of 1e300 ms added to its start)
    /// trapped converting to Int64 and took `devproxy web` down: clamped to years 0001-9999.
    @Test func instantsBeyondTheYearsAreClampedNotATrap() {
        #expect(ISO8601.milliseconds(Date(timeIntervalSince1970: 1e300)) == "9999-12-31T23:59:59.999Z")
        #expect(ISO8601.string(Date(timeIntervalSince1970: -1e300)) == "0001-01-01T00:00:00Z")
        #expect(ISO8601.milliseconds(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
    }

    /// The same-day shortcut gives what parsing both instants gives, and declines the rest.
    @Test func millisecondsOfTheSameDayMatchParsingBoth() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let start = Int64.random(in: 0...4_102_444_800_000, using: &generator)
            let end = start + Int64.random(in: -5_000...90_000_000, using: &generator)
            let a = ISO8601.milliseconds(Date(timeIntervalSince1970: Double(start) / 1000))
            let b = ISO8601.milliseconds(Date(timeIntervalSince1970: Double(end) / 1000))
            let parsed = Int(((ISO8601.date(b)!.timeIntervalSince(ISO8601.date(a)!)) * 1000).rounded())
            if let same = ISO8601.millisecondsOfSameDay(from: a, to: b) {
                #expect(a.prefix(10) == b.prefix(10))
                #expect(same == parsed, "\(a) → \(b)")
            } else {
                #expect(a.prefix(10) != b.prefix(10), "\(a) → \(b) declined")
            }
        }
        #expect(ISO8601.millisecondsOfSameDay(from: "2026-12-05T10:00:00.000Z", to: "2026-12-05T10:00:01.250Z") == 1_250)
        #expect(ISO8601.millisecondsOfSameDay(from: "2026-12-05T23:59:59.999Z", to: "2026-12-06T00:00:00.001Z") == nil)
        #expect(ISO8601.millisecondsOfSameDay(from: "2026-12-05T10:00:00Z", to: "2026-12-05T10:00:01Z") == nil)
        #expect(ISO8601.millisecondsOfSameDay(from: "2026-12-05T10:00:00.000+01:00", to: "2026-12-05T10:00:01.000Z") == nil)
    }

    @Test func matchesFoundationOverManyInstants() {
        let seconds = Self.reference(fraction: false)
        let millis = Self.reference(fraction: true)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            // Whole milliseconds, so both sides round the same instant.
            let instant = Date(timeIntervalSince1970: Double(Int64.random(in: 0...4_102_444_800_000, using: &generator)) / 1000)
            #expect(ISO8601.string(instant) == seconds.string(from: instant))
            #expect(ISO8601.milliseconds(instant) == millis.string(from: instant))
            let parsed = ISO8601.date(ISO8601.milliseconds(instant))
            #expect(parsed.map { abs($0.timeIntervalSince(instant)) < 0.000_5 } == true)
        }
    }
}
