/// Sizes and durations the way the console shows them: short, decimal units.
enum HumanUnits {
    /// `512 B`, `1.2 kB`, `30 kB`, `4.5 MB`: SI units, one decimal below 10.
    static func size(_ bytes: Int) -> String {
        guard bytes >= 1000 else { return "\(bytes) B" }
        var value = Double(bytes)
        for unit in ["kB", "MB", "GB", "TB"] {
            value /= 1000
            // Round first so 999_999 bytes reads "1.0 MB", not "1000 kB".
            let shown = value < 9.95 ? (value * 10).rounded() / 10 : value.rounded()
            if shown < 1000 || unit == "TB" {
                return value < 9.95 ? "\(oneDecimal(shown)) \(unit)" : "\(Int(shown)) \(unit)"
            }
        }
        return "\(bytes) B"
    }

    /// `35 ms`, `5.1 s`, `2 min 5 s`.
    static func duration(milliseconds: Double) -> String {
        let ms = max(0, milliseconds)
        if ms < 1000 { return "\(Int(ms.rounded())) ms" }
        if ms < 59_950 { return "\(oneDecimal((ms / 100).rounded() / 10)) s" }
        let seconds = Int((ms / 1000).rounded())
        return "\(seconds / 60) min \(seconds % 60) s"
    }

    private static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
