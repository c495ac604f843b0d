#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A body's declared character set (`Content-Type: text/html; charset=Shift_JIS`), and its bytes
/// read as text in it, through the C library's `iconv(3)`.
///
/// Names are matched as a browser matches them (the WHATWG Encoding Standard's labels): `iso-8859-1`,
/// `latin1` and `us-ascii` are read as windows-1252, so a byte 0x80–0x9F shows as the page shows it
/// (`€`, `„`, `“`) and not as a control character. UTF-8 is not a charset here: the caller reads
/// it as it reads undeclared bytes.
public struct BodyCharset: Equatable, Sendable {
    /// The name as the body declared it, lowercased (`shift_jis`), which the flow log records.
    public let name: String
    /// The name `iconv_open` is given.
    let iconvName: String
    /// Whether the bytes below 0x80 are ASCII in it (not UTF-16/32, not ISO-2022, UTF-7 or HZ):
    /// a body of such bytes alone reads the same as UTF-8 and needs no conversion.
    public let isASCIICompatible: Bool

    /// The `charset` parameter of `contentType`, when it names a character set other than UTF-8
    /// that `iconv` can read; nil otherwise (none, UTF-8, or a name it does not know).
    ///
    /// A content type without `;` costs one scan: no parameter to parse.
    public init?(contentType: String?) {
        guard let contentType, contentType.utf8.contains(UInt8(ascii: ";")),
              let declared = MediaType.parse(contentType).parameters["charset"] else { return nil }
        let name = declared.lowercased()
        guard !name.isEmpty, !Self.utf8Labels.contains(name), name.utf8.count <= 40,
              name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        let iconvName = Self.browserAliases[name] ?? name
        guard Self.iconvKnows(iconvName) else { return nil }
        self.name = name
        self.iconvName = iconvName
        let upper = iconvName.uppercased()
        isASCIICompatible = !Self.asciiIncompatible.contains { upper.hasPrefix($0) }
    }

    /// The UTF-16 a byte order mark at the start of `bytes` names (`FE FF` big-endian, `FF FE`
    /// little-endian), whatever the label says: the WHATWG Encoding Standard's decode sniffs the
    /// mark first, and a browser shows such a body as that UTF-16. nil without one.
    public init?(byteOrderMark bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[bytes.startIndex], second = bytes[bytes.startIndex + 1]
        switch (first, second) {
        case (0xFE, 0xFF): name = "utf-16be"
        case (0xFF, 0xFE): name = "utf-16le"
        default: return nil
        }
        // iconv's "UTF-16" reads the mark, and drops it.
        iconvName = "UTF-16"
        isASCIICompatible = false
    }

    /// `bytes` read in this charset, as a String; nil when they are not text in it (a byte
    /// sequence it does not have).
    /// - Parameter isPrefix: the bytes may stop inside a character: a last character cut short
    ///   is left out rather than making the whole prefix unreadable.
    public func text(_ bytes: ArraySlice<UInt8>, isPrefix: Bool) -> String? {
        if bytes.isEmpty { return "" }
        let input = Array(bytes)
        // UTF-16 as a browser reads it: little-endian unless a byte order mark says otherwise
        // (`iconv`'s "UTF-16" reads the mark, and drops it, but takes big-endian without one).
        var from = iconvName
        if from == "UTF-16LE", input.count >= 2, input[0] == 0xFE && input[1] == 0xFF || input[0] == 0xFF && input[1] == 0xFE {
            from = "UTF-16"
        }
        guard let output = Self.convert(input, from: from, to: "UTF-8", allowingCutEnd: isPrefix) else { return nil }
        return String(validating: output, as: UTF8.self)
    }

    /// `text` written in this charset (UTF-16 little-endian, without a byte order mark); nil when
    /// it has a character the charset does not (an edited body sent again, `Replayer`).
    public func bytes(of text: String) -> [UInt8]? {
        Self.convert(Array(text.utf8), from: "UTF-8", to: iconvName, allowingCutEnd: false)
    }

    /// `input` converted by `iconv` from `from` to `to`; nil for a sequence `from` does not have
    /// or `to` cannot write, or input that ends mid-character unless `allowingCutEnd` (then what
    /// came before that character).
    private static func convert(_ input: [UInt8], from: String, to: String, allowingCutEnd: Bool) -> [UInt8]? {
        var input = input
        let converter = iconv_open(to, from)
        guard let converter, Int(bitPattern: converter) != -1 else { return nil }
        defer { iconv_close(converter) }
        // A byte becomes at most 3 bytes of UTF-8 in the charsets met in practice (a 2-byte unit
        // of UTF-16 at most 3, a 4-byte one 4); the loop grows the output for any other.
        var output = [UInt8](repeating: 0, count: input.count * 3 + 16)
        var consumed = 0, written = 0
        while true {
            let (result, error) = input.withUnsafeMutableBytes { inBuffer in
                output.withUnsafeMutableBytes { outBuffer in
                    var inPointer: UnsafeMutablePointer<CChar>? = (inBuffer.baseAddress! + consumed)
                        .assumingMemoryBound(to: CChar.self)
                    var inLeft = inBuffer.count - consumed
                    var outPointer: UnsafeMutablePointer<CChar>? = (outBuffer.baseAddress! + written)
                        .assumingMemoryBound(to: CChar.self)
                    var outLeft = outBuffer.count - written
                    let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                    let error = result == -1 ? errno : 0
                    consumed = inBuffer.count - inLeft
                    written = outBuffer.count - outLeft
                    return (result, error)
                }
            }
            if result != -1 { break }
            if error == E2BIG {
                output += [UInt8](repeating: 0, count: output.count)
                continue
            }
            // An incomplete character at the end of a cut prefix: what came before it stands.
            if error == EINVAL, allowingCutEnd { break }
            // EILSEQ: a sequence `from` does not have or `to` cannot write; EINVAL on whole input:
            // it ends mid-character.
            return nil
        }
        output.removeSubrange(written...)
        return output
    }

    /// Whether `iconv` has a converter from `name` to UTF-8 (the C library's list, which the
    /// machine's gconv modules decide).
    private static func iconvKnows(_ name: String) -> Bool {
        let converter = iconv_open("UTF-8", name)
        guard let converter, Int(bitPattern: converter) != -1 else { return false }
        iconv_close(converter)
        return true
    }

    /// The labels the Encoding Standard reads as UTF-8 (and `utf8`, which servers send too).
    private static let utf8Labels: Set<String> = ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8",
                                                  "unicode20utf8", "x-unicode20utf8"]

    /// Labels the Encoding Standard reads as another encoding than `iconv` would (its "Encodings"
    /// table, https://encoding.spec.whatwg.org/#names-and-labels): Latin-1 and ASCII are
    /// windows-1252 there, as in every browser, and `gb2312` is GBK.
    private static let browserAliases: [String: String] = [
        "iso-8859-1": "WINDOWS-1252", "iso8859-1": "WINDOWS-1252", "iso_8859-1": "WINDOWS-1252",
        "iso88591": "WINDOWS-1252", "latin1": "WINDOWS-1252", "l1": "WINDOWS-1252",
        "us-ascii": "WINDOWS-1252", "ascii": "WINDOWS-1252", "ansi_x3.4-1968": "WINDOWS-1252",
        "cp1252": "WINDOWS-1252", "x-cp1252": "WINDOWS-1252", "windows-1252": "WINDOWS-1252",
        "cp819": "WINDOWS-1252", "ibm819": "WINDOWS-1252", "iso-ir-100": "WINDOWS-1252",
        // gbk's decoder is gb18030's there.
        "gb2312": "GB18030", "gbk": "GB18030", "x-gbk": "GB18030", "chinese": "GB18030", "csgb2312": "GB18030",
        "iso-8859-9": "WINDOWS-1254", "latin5": "WINDOWS-1254", "iso-8859-11": "WINDOWS-874", "tis-620": "WINDOWS-874",
        // Shift_JIS is Microsoft's windows-31j there (① and 髙 are not in JIS X 0208), EUC-KR is
        // windows-949, and Big5 is Big5-HKSCS.
        "shift_jis": "CP932", "shift-jis": "CP932", "sjis": "CP932", "x-sjis": "CP932", "ms_kanji": "CP932",
        "csshiftjis": "CP932", "windows-31j": "CP932", "euc-kr": "CP949", "cseuckr": "CP949", "korean": "CP949",
        "ks_c_5601-1987": "CP949", "windows-949": "CP949", "big5": "BIG5-HKSCS", "big5-hkscs": "BIG5-HKSCS",
        "x-x-big5": "BIG5-HKSCS", "cn-big5": "BIG5-HKSCS", "csbig5": "BIG5-HKSCS", "utf-16": "UTF-16LE",
    ]

    /// `iconv` names whose bytes below 0x80 are not ASCII.
    private static let asciiIncompatible = ["UTF-16", "UTF16", "UTF-32", "UTF32", "UCS", "UNICODE", "ISO-2022",
                                            "ISO2022", "CSISO2022", "UTF-7", "UTF7", "HZ"]
}
