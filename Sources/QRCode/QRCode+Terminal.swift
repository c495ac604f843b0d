/// The symbol as terminal text.
extension QRCode {
    /// Two module rows per text line with Unicode half blocks (`▀ ▄ █` and space).
    ///
    /// With `colors` (the default) every line sets black on bright white itself (SGR 30;107)
    /// and resets at its end, so the code reads the same on dark and light terminal themes;
    /// without it the text relies on a dark-on-light terminal.
    ///
    /// - Parameter quietZone: light modules around the symbol (default 4, as ISO/IEC 18004 asks).
    public func terminalText(quietZone: Int = QRCode.standardQuietZone, colors: Bool = true) -> String {
        let range = -quietZone..<(size + quietZone)
        var lines: [String] = []
        var y = range.lowerBound
        while y < range.upperBound {
            var line = colors ? "\u{1B}[30;107m" : ""
            for x in range {
                switch (isDark(x: x, y: y), isDark(x: x, y: y + 1)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + (colors ? "\u{1B}[0m" : ""))
            y += 2
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
