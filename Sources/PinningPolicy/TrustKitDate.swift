import Foundation

/// TrustKit's `TSKExpirationDate` and report date formats.
enum TrustKitDate {
    /// 00:00:00 UTC of a `yyyy-MM-dd` date, or nil when it does not parse.
    ///
    /// TrustKit sets no locale, so a device with a non-Gregorian calendar reads `yyyy` in that
    /// calendar (TrustKit issue #322); we model the Gregorian case only.
    static func expiration(_ text: String) -> Date? {
        day(text, timeZone: TimeZone(identifier: "UTC")!)
    }

    /// 00:00:00 in `timeZone` of a `yyyy-MM-dd` date, or nil when it does not parse.
    ///
    /// Only ASCII reaches the formatter: swift-corelibs-foundation's DateFormatter traps
    /// ("Incorrect range") on some non-ASCII text, which the TrustKit fuzz target found with
    /// `"20ܼS30-06-01"`. No valid date holds anything but ASCII digits and dashes.
    static func day(_ text: String, timeZone: TimeZone) -> Date? {
        guard text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        return dayFormatter(timeZone: timeZone).date(from: text)
    }

    /// A strict `yyyy-MM-dd` formatter in `timeZone`, Gregorian, en_US_POSIX.
    static func dayFormatter(timeZone: TimeZone) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.isLenient = false
        return formatter
    }

    /// `yyyy-MM-dd'T'HH:mm:ss'Z'` in UTC, the report `date-time`.
    static func reportTimestamp(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")!
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        return formatter.string(from: date)
    }
}
