/// Header bytes that are not UTF-8 (RFC 9110 §5.5's obs-text: a Latin-1 filename, a raw cookie),
/// carried in a `String` so that they leave as they came.
///
/// A value whose bytes are not valid UTF-8 is read with each byte 0x80–0xFF as the private-use
/// scalar U+F780–U+F7FF (`string`); the serializers write those scalars back as the bytes
/// (`wireBytes`), and what a person reads (the flow log, the web UI) shows them as the Latin-1
/// letters they most likely are (`readable`). Such values used to be read as Latin-1 and sent on as
/// UTF-8: `r\xe9sum\xe9.pdf` reached the client as `r\xc3\xa9sum\xc3\xa9.pdf`, and valid UTF-8 beside
/// a stray byte was encoded twice.
public enum ObsText {
    private static let base: UInt32 = 0xF700
    /// The first byte of every mapped scalar's UTF-8 (EF 9E 80 … EF 9F BF): what a quick scan looks for.
    private static let lead: UInt8 = 0xEF

    /// `bytes` as text: UTF-8 when valid, else each byte past ASCII as its private-use scalar.
    public static func string<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        decoded(bytes)
    }

    /// `string(_:)` of an array (an HTTP/2 field's value): ASCII, as nearly every value is, is
    /// its own UTF-8 and becomes a string at once. Called across modules, the generic path ran
    /// unspecialized: `String(validating:as:)` looked up type metadata at run time for every value,
    /// 4.7 % of the h2 keep-alive cell's samples (perf, docs/performance.md, run 52).
    public static func string(_ bytes: [UInt8]) -> String {
        let ascii = bytes.withUnsafeBufferPointer { buffer in buffer.allSatisfy { $0 < 0x80 } }
        return ascii ? String(decoding: bytes, as: UTF8.self) : decoded(bytes)
    }

    private static func decoded<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            scalars.append(byte < 0x80 ? Unicode.Scalar(byte) : Unicode.Scalar(base + UInt32(byte))!)
        }
        return String(scalars)
    }

    /// Whether `value` may hold mapped bytes (its UTF-8 has the lead byte 0xEF; most never do).
    @inline(__always)
    public static func mayHoldRawBytes(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { $0.contains(lead) }
    }

    /// The bytes `value` stands for on the wire, when it holds mapped bytes; nil when its UTF-8 is
    /// its bytes (nearly always).
    public static func wireBytes(_ value: String) -> [UInt8]? {
        guard holdsRawBytes(value) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            if isMapped(scalar) {
                bytes.append(UInt8(scalar.value - base))
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }

    /// `value` to read: mapped bytes as the Latin-1 letters they most likely are.
    public static func readable(_ value: String) -> String {
        guard holdsRawBytes(value) else { return value }
        var scalars = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            scalars.append(isMapped(scalar) ? Unicode.Scalar(scalar.value - base)! : scalar)
        }
        return String(scalars)
    }

    /// Whether `value` holds mapped bytes: the quick scan first, the scalars only when it finds the lead byte.
    private static func holdsRawBytes(_ value: String) -> Bool {
        mayHoldRawBytes(value) && value.unicodeScalars.contains(where: isMapped)
    }

    private static func isMapped(_ scalar: Unicode.Scalar) -> Bool {
        (base + 0x80...base + 0xFF).contains(scalar.value)
    }
}
