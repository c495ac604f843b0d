import Testing
import HTTPTypes
@testable import HTTP1

/// `FieldLine.parse`, which every field line of every message goes through: its eight-bytes-at-
/// a-time fast path must answer what a byte-by-byte reading answers.
@Suite struct FieldLineTests {
    /// The word-at-a-time printable check agrees with a byte-by-byte one for every byte value at
    /// every position of lines up to 24 bytes.
    @Test func printableCheckFindsEveryOtherByteAtEveryOffset() {
        let naive: ([UInt8]) -> Bool = { $0.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
        for length in 1...24 {
            for position in 0..<length {
                for probe in UInt8.min...UInt8.max {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = probe
                    let checked = bytes.withUnsafeBufferPointer { FieldLine.isPrintableASCII($0) }
                    #expect(checked == naive(bytes), "length \(length), byte \(probe) at \(position)")
                }
            }
        }
        #expect([UInt8]().withUnsafeBufferPointer { FieldLine.isPrintableASCII($0) })
    }

    /// Lines that take the fast path and lines that do not: name, trimmed value, or the error.
    @Test(arguments: [
        ("Content-Type: text/plain", "Content-Type", "text/plain"),
        ("X-Long-Header-Name-Here:   spaced value with words   ", "X-Long-Header-Name-Here", "spaced value with words"),
        ("X-Tab:\tvalue\twith\ttabs\t", "X-Tab", "value\twith\ttabs"),
        ("X-Empty:", "X-Empty", ""),
        ("X-Colons: a:b:c", "X-Colons", "a:b:c"),
        ("X-Utf8: caf\u{E9} \u{1F600}", "X-Utf8", "caf\u{E9} \u{1F600}"),
    ])
    func wellFormedLinesSplit(_ line: String, _ name: String, _ value: String) throws {
        let parsed = try FieldLine.parse(ArraySlice(line.utf8), side: .request)
        #expect(parsed.0 == name)
        #expect(parsed.1 == value)
    }

    /// Bytes that are not UTF-8 are kept as they came (`ObsText`) and read as Latin-1 letters.
    @Test func latin1ValuesStayVisibleAndExact() throws {
        let line: [UInt8] = Array("X-Latin: caf".utf8) + [0xE9]
        let value = try FieldLine.parse(line[...], side: .response).1
        #expect(ObsText.readable(value) == "caf\u{E9}")
        #expect(ObsText.wireBytes(value) == Array("caf".utf8) + [0xE9])
    }

    @Test(arguments: [
        ("no colon at all in this line", HTTP1ParseError.Code.missingColon),
        (": value", .invalidHeaderName),
        ("Name : value", .whitespaceBeforeColon),
        ("Na(me: value", .invalidHeaderName),
        ("Name: va\u{0}lue", .nulCharacter),
        ("Name: value\r more", .bareCR),
        ("Name: va\u{7F}lue and more bytes", .invalidHeaderValue),
        ("Name\u{1}: value", .invalidHeaderValue),
        ("no colon but a NUL \u{0} later", .nulCharacter),
    ])
    func malformedLinesAreRefusedWithTheirFirstProblem(_ line: String, _ code: HTTP1ParseError.Code) {
        #expect(throws: HTTP1ParseError.self) { try FieldLine.parse(ArraySlice(line.utf8), side: .request) }
        do {
            _ = try FieldLine.parse(ArraySlice(line.utf8), side: .request)
        } catch {
            #expect(error.code == code, "\(line)")
        }
    }
}
