import HTTPTypes

/// Writes heads and chunk framing as HTTP/1.1 bytes.
///
/// Fields are written in the order and letter case given. The serializer does not validate:
/// heads from the parsers are already valid, and a caller building its own must not put CR or
/// LF in a value (that would split the message).
public enum HTTP1Serializer {
    /// `method SP target SP version CRLF`, the header fields, and the empty line.
    public static func serialize(_ head: HTTPRequestHead) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + head.target.utf8.count + 32 * head.headers.count)
        append(head.method, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        append(head.target, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        append(head.version.description, to: &bytes)
        bytes += [ASCII.cr, ASCII.lf]
        appendFields(head.headers, to: &bytes)
        return bytes
    }

    /// `version SP status SP reason CRLF`, the header fields, and the empty line.
    public static func serialize(_ head: HTTPResponseHead) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + 32 * head.headers.count)
        append(head.version.description, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendDecimal(head.status, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        if let raw = ObsText.wireBytes(head.reason) { bytes += raw } else { append(head.reason, to: &bytes) }
        bytes += [ASCII.cr, ASCII.lf]
        appendFields(head.headers, to: &bytes)
        return bytes
    }

    /// One chunk of a chunked body: hex size, CRLF, the data, CRLF.
    ///
    /// Empty data yields no bytes, since a zero-size chunk would end the body; use `lastChunk`.
    public static func chunk(_ data: some Collection<UInt8>) -> [UInt8] {
        guard !data.isEmpty else { return [] }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(data.count + 20)
        append(String(data.count, radix: 16, uppercase: true) + "\r\n", to: &bytes)
        bytes.append(contentsOf: data)
        append("\r\n", to: &bytes)
        return bytes
    }

    /// The end of a chunked body: `0 CRLF`, the trailer fields, and the empty line.
    public static func lastChunk(trailers: HTTPHeaders = HTTPHeaders()) -> [UInt8] {
        var bytes = Array("0\r\n".utf8)
        appendFields(trailers, to: &bytes)
        return bytes
    }

    /// `name: value CRLF` for each field, then the empty line: sized first, then each string
    /// copied from its UTF-8 storage (appending piece by piece cost ~1k instructions a field).
    private static func appendFields(_ fields: HTTPHeaders, to bytes: inout [UInt8]) {
        var length = 2
        // A value holding bytes that are not UTF-8 (`ObsText`) leaves as those bytes.
        var raw: [Int: [UInt8]] = [:]
        for (index, field) in fields.enumerated() {
            var valueLength = field.value.utf8.count
            if let wire = ObsText.wireBytes(field.value) {
                raw[index] = wire
                valueLength = wire.count
            }
            length += field.name.utf8.count + valueLength + 4
        }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: length))
        bytes.withUnsafeMutableBytes { buffer in
            var cursor = Cursor(at: buffer.baseAddress! + start)
            for (index, field) in fields.enumerated() {
                cursor.put(field.name)
                cursor.put(ASCII.colon, ASCII.space)
                if let wire = raw.isEmpty ? nil : raw[index] { cursor.put(wire) } else { cursor.put(field.value) }
                cursor.put(ASCII.cr, ASCII.lf)
            }
            cursor.put(ASCII.cr, ASCII.lf)
        }
    }

    /// Where the next byte goes in storage sized in advance. (A struct, not a variable captured
    /// by nested functions: that one is boxed and checked for exclusive access on every use.)
    private struct Cursor {
        var next: UnsafeMutableRawPointer

        init(at start: UnsafeMutableRawPointer) { next = start }

        mutating func put(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                guard let source = utf8.baseAddress, utf8.count > 0 else { return }
                next.copyMemory(from: source, byteCount: utf8.count)
                next += utf8.count
            }
        }

        mutating func put(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { source in
                guard let base = source.baseAddress, source.count > 0 else { return }
                next.copyMemory(from: base, byteCount: source.count)
                next += source.count
            }
        }

        mutating func put(_ first: UInt8, _ second: UInt8) {
            next.storeBytes(of: first, as: UInt8.self)
            (next + 1).storeBytes(of: second, as: UInt8.self)
            next += 2
        }
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: text.utf8)
    }

    /// A non-negative number in decimal (status codes), without building a String.
    private static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        guard value > 0 else {
            if value == 0 { bytes.append(UInt8(ascii: "0")) } else { append(String(value), to: &bytes) }
            return
        }
        var divisor = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
