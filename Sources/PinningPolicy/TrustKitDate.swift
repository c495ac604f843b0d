import Foundation

/// TrustKit's `TSKExpirationDate` and report date formats.
enum TrustKitDate {
    /// 00:00:00 UTC of a `yyyy-MM-dd` date, or nil when it does not parse.
    ///
    /// TrustKit sets no locale, so a device with a non-Gregorian calendar reads `yyyy` in that
    /// calendar (TrustKit issue #322); we model the Gregorian case only.
    static func expiration(_ text: String) -> Date? {
        dayFormatter(timeZone: TimeZone(identifier: "UTC")!).date(from: text)
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
