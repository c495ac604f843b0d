import Foundation

/// RFC 3339 / ISO 8601 timestamps in UTC.
///
/// Formatting is written out with gmtime_r: ISO8601DateFormatter sets up ICU on every use and
/// cost more than the rest of a proxied request put together.
public enum ISO8601 {
    /// `2026-11-30T09:03:27Z`.
    public static func string(_ date: Date) -> String {
        format(date, fraction: false)
    }

    /// `2026-11-30T09:03:27.123Z`.
    public static func milliseconds(_ date: Date) -> String {
        format(date, fraction: true)
    }

    /// Whole milliseconds from `start` to `end` when both are `milliseconds(_:)`'s form
    /// (`2026-03-01T12:01:02.345Z`) on the same day, read from their times of day alone; nil
    /// otherwise (then `date(_:)` of each tells). A flow's two timestamps are, and the session
    /// store reads its duration from them for every flow.
    public static func millisecondsOfSameDay(from start: String, to end: String) -> Int? {
        var start = start, end = end
        return start.withUTF8 { a in
            end.withUTF8 { b in
                guard a.count == 24, b.count == 24, let first = timeOfDay(a), let last = timeOfDay(b),
                      memcmp(a.baseAddress!, b.baseAddress!, 11) == 0 else { return nil }
                return last - first
            }
        }
    }

    /// The milliseconds since midnight of a 24-byte `YYYY-MM-DDThh:mm:ss.fffZ`, or nil.
    private static func timeOfDay(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes[19] == UInt8(ascii: "."), bytes[23] == UInt8(ascii: "Z"),
              let hour = number(bytes, 11, 2), let minute = number(bytes, 14, 2), let second = number(bytes, 17, 2),
              let millisecond = number(bytes, 20, 3) else { return nil }
        return ((hour * 60 + minute) * 60 + second) * 1000 + millisecond
    }

    /// The decimal number `count` digits long at `from` in `bytes`; nil if any is not a digit or
    /// `bytes` ends before.
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ from: Int, _ count: Int) -> Int? {
        guard from + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[from..<(from + count)] {
            guard byte >= 0x30 && byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// The instant an RFC 3339 date-time names (`2026-03-01T12:01:02.345Z`, or with an
    /// offset), or nil. Hand-written like the formatting: ICU costs more than the parse.
    public static func date(_ text: String) -> Date? {
        // The string's own UTF-8, not a copy: the session store parses two per flow.
        var text = text
        return text.withUTF8 { date(utf8: $0) }
    }

    private static func date(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        func number(_ from: Int, _ count: Int) -> Int? { Self.number(bytes, from, count) }
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t") || bytes[10] == UInt8(ascii: " "),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            while index < bytes.count, bytes[index] >= 0x30 && bytes[index] <= 0x39 {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
        }
        guard index < bytes.count else { return nil }
        var offset = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            guard index + 1 == bytes.count else { return nil }
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard index + 6 == bytes.count, bytes[index + 3] == UInt8(ascii: ":"),
                  let hours = number(index + 1, 2), let minutes = number(index + 4, 2) else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[index] == UInt8(ascii: "+") ? 1 : -1)
        default:
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }


    private static func format(_ date: Date, fraction: Bool) -> String {
        let interval = date.timeIntervalSince1970
        // Round to whole milliseconds first, then split: 1796036607.045 - 1796036607 is
        // 0.04499995…, which truncated would print as .044.
        // Clamped to years 0001-9999 (an imported file's absurd time trapped the conversion).
        let millisecondsSince1970 = (interval * 1000).rounded()
        let totalMillis = millisecondsSince1970.isFinite
            ? Int64(min(max(millisecondsSince1970, -62_135_596_800_000), 253_402_300_799_999)) : 0
        var seconds = time_t(totalMillis >= 0 ? totalMillis / 1000 : (totalMillis - 999) / 1000)
        let millis = Int(totalMillis - Int64(seconds) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Two of these per flow record: digits go straight into a fixed buffer, no strings
        // concatenated. Years outside 0...9999 cannot come out of a Date the proxy stamps.
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else {
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", year, parts.tm_mon + 1, parts.tm_mday,
                              parts.tm_hour, parts.tm_min, parts.tm_sec)
            return text + (fraction ? String(format: ".%03dZ", millis) : "Z")
        }
        let length = fraction ? 24 : 20
        return String(unsafeUninitializedCapacity: length) { buffer in
            var index = 0
            func put(_ value: Int, digits: Int) {
                var divisor = 1
                for _ in 1..<digits { divisor *= 10 }
                var rest = value
                while divisor > 0 {
                    buffer[index] = UInt8(ascii: "0") + UInt8(rest / divisor)
                    rest %= divisor
                    divisor /= 10
                    index += 1
                }
            }
            func put(_ character: Unicode.Scalar) {
                buffer[index] = UInt8(ascii: character)
                index += 1
            }
            put(year, digits: 4); put("-"); put(Int(parts.tm_mon) + 1, digits: 2); put("-"); put(Int(parts.tm_mday), digits: 2)
            put("T"); put(Int(parts.tm_hour), digits: 2); put(":"); put(Int(parts.tm_min), digits: 2); put(":")
            put(Int(parts.tm_sec), digits: 2)
            if fraction { put("."); put(millis, digits: 3) }
            put("Z")
            return index
        }
    }
}
