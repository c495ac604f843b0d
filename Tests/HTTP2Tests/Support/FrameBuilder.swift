/// Hand-built HTTP/2 frames (RFC 9113 §4.1) and HPACK blocks (RFC 7541) for tests that must
/// send what no well-behaved library would, plus a parser for what a session writes.
enum Frame {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    enum Kind: UInt8 {
        case data = 0, headers, priority, rstStream, settings, pushPromise, ping, goAway, windowUpdate, continuation
    }

    static let endStream: UInt8 = 0x1
    static let ack: UInt8 = 0x1
    static let endHeaders: UInt8 = 0x4

    /// One frame: 9-byte header, then the payload.
    static func make(_ kind: Kind, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let n = payload.count
        return [UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF), kind.rawValue, flags]
            + be32(stream & 0x7FFF_FFFF) + payload
    }

    static func settings(_ entries: [(UInt16, UInt32)] = [], ack: Bool = false) -> [UInt8] {
        make(.settings, flags: ack ? Self.ack : 0, entries.flatMap { be16($0.0) + be32($0.1) })
    }

    static func headers(stream: UInt32, _ block: [UInt8], endStream: Bool = true, endHeaders: Bool = true) -> [UInt8] {
        make(.headers, flags: (endStream ? Self.endStream : 0) | (endHeaders ? Self.endHeaders : 0), stream: stream, block)
    }

    static func continuation(stream: UInt32, _ block: [UInt8], endHeaders: Bool) -> [UInt8] {
        make(.continuation, flags: endHeaders ? Self.endHeaders : 0, stream: stream, block)
    }

    static func data(stream: UInt32, _ bytes: [UInt8], endStream: Bool = false) -> [UInt8] {
        make(.data, flags: endStream ? Self.endStream : 0, stream: stream, bytes)
    }

    static func rstStream(stream: UInt32, code: UInt32) -> [UInt8] { make(.rstStream, stream: stream, be32(code)) }
    static func ping(_ opaque: [UInt8] = Array(repeating: 7, count: 8)) -> [UInt8] { make(.ping, opaque) }
    static func windowUpdate(stream: UInt32, increment: UInt32) -> [UInt8] {
        make(.windowUpdate, stream: stream, be32(increment))
    }
    static func pushPromise(stream: UInt32, promised: UInt32, _ block: [UInt8]) -> [UInt8] {
        make(.pushPromise, flags: endHeaders, stream: stream, be32(promised) + block)
    }

    /// The preface and an empty SETTINGS: what a client sends first.
    static var clientStart: [UInt8] { preface + settings() }

    // MARK: HPACK

    /// A literal field without indexing, new name, no Huffman (RFC 7541 §6.2.2).
    static func literal(_ name: String, _ value: String) -> [UInt8] {
        [0x00] + string(name) + string(value)
    }

    /// A literal field with incremental indexing, new name (§6.2.1): it enters the dynamic table.
    static func indexedLiteral(_ name: String, _ value: String) -> [UInt8] {
        [0x40] + string(name) + string(value)
    }

    /// An indexed field (§6.1): 62 is the newest dynamic-table entry.
    static func indexed(_ index: Int) -> [UInt8] { integer(index, prefixBits: 7, first: 0x80) }

    /// A request head's HPACK block: GET https://example.test/ plus `extra` literal fields.
    static func getBlock(path: String = "/", extra: [(String, String)] = []) -> [UInt8] {
        // Static table: 2 = :method GET, 7 = :scheme https; :authority and :path as literals.
        indexed(2) + indexed(7) + literal(":authority", "example.test") + literal(":path", path)
            + extra.flatMap { literal($0.0, $0.1) }
    }

    private static func string(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        return integer(bytes.count, prefixBits: 7, first: 0) + bytes
    }

    /// HPACK's prefixed integer (§5.1).
    private static func integer(_ value: Int, prefixBits: Int, first: UInt8) -> [UInt8] {
        let max = (1 << prefixBits) - 1
        if value < max { return [first | UInt8(value)] }
        var out = [first | UInt8(max)]
        var rest = value - max
        while rest >= 128 {
            out.append(UInt8(rest % 128 + 128))
            rest /= 128
        }
        return out + [UInt8(rest)]
    }

    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}

/// A frame as a session wrote it.
struct ParsedFrame: Equatable {
    var kind: UInt8
    var flags: UInt8
    var stream: UInt32
    var payload: [UInt8]

    /// The error code of a RST_STREAM or GOAWAY frame.
    var errorCode: UInt32? {
        switch kind {
        case Frame.Kind.rstStream.rawValue: return be32(at: 0)
        case Frame.Kind.goAway.rawValue: return be32(at: 4)
        default: return nil
        }
    }

    func be32(at offset: Int) -> UInt32 {
        payload[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Splits bytes into frames, skipping a client preface at the start.
    static func parse(_ bytes: [UInt8]) -> [ParsedFrame] {
        var rest = bytes[...]
        if rest.starts(with: Frame.preface) { rest = rest.dropFirst(Frame.preface.count) }
        var frames: [ParsedFrame] = []
        while rest.count >= 9 {
            let h = Array(rest.prefix(9))
            let length = Int(h[0]) << 16 | Int(h[1]) << 8 | Int(h[2])
            guard rest.count >= 9 + length else { break }
            let stream = (UInt32(h[5]) << 24 | UInt32(h[6]) << 16 | UInt32(h[7]) << 8 | UInt32(h[8])) & 0x7FFF_FFFF
            frames.append(ParsedFrame(kind: h[3], flags: h[4], stream: stream, payload: Array(rest.dropFirst(9).prefix(length))))
            rest = rest.dropFirst(9 + length)
        }
        return frames
    }
}

extension [ParsedFrame] {
    func of(_ kind: Frame.Kind) -> [ParsedFrame] { filter { $0.kind == kind.rawValue } }
}
