import Foundation
import QRCode
import Testing
import TestSupport

/// The renderings read back as the text encoded: PNG through a real decoder (zbar's
/// `zbarimg`), the terminal and SVG renderings by mapping them back to modules.
@Suite struct QRCodeTests {
    static let address = "http://192.168.1.20:8080/"

    @Test func pngDecodesWithZbarToTheText() throws {
        let directory = TemporaryDirectory()
        for text in [Self.address, "http://[fd00::1]:8080/?a=1&b=<two>", String(repeating: "x", count: 400)] {
            let path = directory.write("qr.png", bytes: try QRCode(encoding: text).png())
            let result = try Subprocess.run("zbarimg", ["--raw", "-q", path], timeout: 30)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.trimmingCharacters(in: .newlines) == text)
        }
    }

    @Test func pngHasTheSizeAndQuietZoneAsked() throws {
        let code = try QRCode(encoding: Self.address)
        let png = code.png(scale: 3, quietZone: 4)
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let width = png[16..<20].reduce(0) { $0 << 8 | Int($1) }
        #expect(width == (code.size + 8) * 3)
        #expect(Array(png[12..<16]) == Array("IHDR".utf8))
    }

    /// The smallest version that holds the text: 21 modules for a short one (version 1), four
    /// more per version.
    @Test func matrixIsTheSmallestVersionThatHoldsTheText() throws {
        #expect(try QRCode(encoding: "hi").size == 21)
        let longer = try QRCode(encoding: Self.address)
        #expect(longer.size > 21 && (longer.size - 21) % 4 == 0)
        // The three finder patterns: 7×7 with a dark border and a dark 3×3 centre.
        let code = longer
        for (left, top) in [(0, 0), (code.size - 7, 0), (0, code.size - 7)] {
            #expect(code.isDark(x: left, y: top) && code.isDark(x: left + 6, y: top + 6))
            #expect(!code.isDark(x: left + 1, y: top + 1) && code.isDark(x: left + 3, y: top + 3))
        }
    }

    @Test func terminalTextMapsBackToTheModulesAndDecodes() throws {
        let code = try QRCode(encoding: Self.address)
        let text = code.terminalText()
        let lines = text.split(separator: "\n").map(String.init)
        let side = code.size + 8
        #expect(lines.count == (side + 1) / 2)
        // Every line sets its own colours and resets them, whatever the terminal's theme.
        #expect(lines.allSatisfy { $0.hasPrefix("\u{1B}[30;107m") && $0.hasSuffix("\u{1B}[0m") })
        var modules = [Bool](repeating: false, count: side * side)
        for (row, line) in lines.enumerated() {
            let cells = Array(line.dropFirst("\u{1B}[30;107m".count).dropLast("\u{1B}[0m".count))
            #expect(cells.count == side)
            for (column, cell) in cells.enumerated() {
                let (top, bottom) = try #require(["█": (true, true), "▀": (true, false), "▄": (false, true),
                                                 " ": (false, false)][cell])
                modules[2 * row * side + column] = top
                if 2 * row + 1 < side { modules[(2 * row + 1) * side + column] = bottom }
            }
        }
        let decoded = QRCode(size: side, modules: modules)
        for y in 0..<code.size {
            for x in 0..<code.size { #expect(decoded.isDark(x: x + 4, y: y + 4) == code.isDark(x: x, y: y)) }
        }
        let directory = TemporaryDirectory()
        let path = directory.write("terminal.png", bytes: decoded.png(quietZone: 0))
        let result = try Subprocess.run("zbarimg", ["--raw", "-q", path], timeout: 30)
        #expect(result.stdout.trimmingCharacters(in: .newlines) == Self.address)
    }

    @Test func svgDrawsExactlyTheDarkModules() throws {
        let code = try QRCode(encoding: Self.address)
        let svg = try QRCode.svg(for: Self.address)
        let side = code.size + 8
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\""))
        let path = try #require(svg.firstMatch(of: /<path d="([^"]*)"/)?.1)
        var drawn = Set<Int>()
        for match in path.matches(of: /M(\d+) (\d+)h(\d+)v1h-(\d+)z/) {
            let (x, y, length) = (Int(match.1)!, Int(match.2)!, Int(match.3)!)
            #expect(Int(match.4)! == length)
            for column in x..<(x + length) { drawn.insert(y * side + column) }
        }
        var expected = Set<Int>()
        for y in 0..<code.size {
            for x in 0..<code.size where code.isDark(x: x, y: y) { expected.insert((y + 4) * side + x + 4) }
        }
        #expect(drawn == expected)
    }

    @Test func emptyAndOversizedTextsAreRefused() {
        #expect(throws: QRCodeError.self) { try QRCode(encoding: "") }
        #expect(throws: QRCodeError.self) { try QRCode(encoding: String(repeating: "é", count: 3000)) }
    }
}
