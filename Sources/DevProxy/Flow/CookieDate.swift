import CertAuthority
import Foundation

/// A `Set-Cookie` `Expires` date, read as browsers read it (RFC 6265 §5.1.1: the tokens of
/// any of the formats servers send — `Wed, 21 Oct 2026 07:28:00 GMT`, `Wednesday, 21-Oct-26
/// 07:28:00 GMT`, asctime's `Wed Oct 21 07:28:00 2026` — found by their shape, not by one
/// pattern), for HAR, whose `expires` is ISO 8601 (`2026-10-21T07:28:00.000Z`).
enum CookieDate {
    /// The ISO 8601 form of `text`, or nil when RFC 6265's algorithm finds no date in it.
    static func iso8601(_ text: String) -> String? {
        var time: (Int, Int, Int)?, day: Int?, month: Int?, year: Int?
        for token in tokens(text) {
            if time == nil, let parsed = Self.time(token) {
                time = parsed
            } else if day == nil, let value = number(token, digits: 1...2) {
                day = value
            } else if month == nil, let value = Self.month(token) {
                month = value
            } else if year == nil, let value = number(token, digits: 2...4) {
                year = value
            }
        }
        guard let (hour, minute, second) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour,
                                                            minute: minute, second: second)),
              calendar.component(.day, from: date) == day else { return nil }
        return ISO8601.milliseconds(date)
    }

    /// The date-tokens: runs of non-delimiters (§5.1.1's delimiter is any of these bytes).
    private static func tokens(_ text: String) -> [Substring] {
        text.split { character in
            guard let value = character.asciiValue else { return false }
            return value == 0x09 || (0x20...0x2F).contains(value) || (0x3B...0x40).contains(value)
                || (0x5B...0x60).contains(value) || (0x7B...0x7E).contains(value)
        }
    }

    /// A number of `digits` digits at the token's start (what follows may be anything but a digit).
    private static func number(_ token: Substring, digits: ClosedRange<Int>) -> Int? {
        let leading = token.prefix { $0.isASCII && $0.isNumber }
        guard digits.contains(leading.count), token.dropFirst(leading.count).first?.isNumber != true else { return nil }
        return Int(leading)
    }

    /// `hh:mm:ss`, each one or two digits.
    private static func time(_ token: Substring) -> (Int, Int, Int)? {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let hour = number(parts[0], digits: 1...2), let minute = number(parts[1], digits: 1...2),
              let second = number(parts[2], digits: 1...2) else { return nil }
        return (hour, minute, second)
    }

    private static func month(_ token: Substring) -> Int? {
        let names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        return names.firstIndex(of: token.prefix(3).lowercased()).map { $0 + 1 }
    }
}
