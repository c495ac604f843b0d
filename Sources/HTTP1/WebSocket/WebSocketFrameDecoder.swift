/// Decodes WebSocket framing (RFC 6455 §5.2) from a relayed byte stream, for logging only.
///
/// Bytes are decoded as they are fed and then dropped: the decoder keeps at most one frame
/// header (≤ 14 bytes) and `prefixLimit` payload bytes per frame and per message, and counts the
/// rest. The proxy relays the original bytes; nothing here changes them.
/// ```
///  0                   1                   2                   3
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// ... masking key (32, if MASK) ... payload data ...
/// ```
public struct WebSocketFrameDecoder: Sendable {
    /// A frame whose header is parsed and whose payload is being counted.
    private struct FramePayload: Sendable {
        var frame: WebSocketFrame
        var maskingKey: [UInt8]
        var received: UInt64 = 0
    }

    /// How many payload bytes each frame and message keeps for logging. Lowering it applies to
    /// what is kept from then on (a message already past it keeps what it has).
    public var prefixLimit: Int
    private var header: [UInt8] = []
    private var payload: FramePayload?
    private var message: WebSocketMessage?
    private var events: [WebSocketEvent] = []
    private var eventIndex = 0
    private var failure: WebSocketFrameError?

    /// Whether data frames' payloads are reported whole (`.payload` events), not only their prefix.
    public let streamingPayload: Bool

    /// Creates a decoder keeping up to `prefixLimit` payload bytes per frame and message (default
    /// 256), and with `streamingPayload` reporting every data frame's payload as it arrives.
    public init(prefixLimit: Int = 256, streamingPayload: Bool = false) {
        self.prefixLimit = prefixLimit
        self.streamingPayload = streamingPayload
    }

    /// Decodes `bytes`; the resulting events are returned by `next()`.
    public mutating func feed(_ bytes: some Collection<UInt8>) {
        guard failure == nil else { return }
        var rest = ArraySlice(bytes)
        do throws(WebSocketFrameError) {
            while !rest.isEmpty {
                if payload != nil {
                    consumePayload(&rest)
                } else {
                    try consumeHeader(&rest)
                }
            }
        } catch {
            failure = error
        }
    }

    /// The next decoded event, or nil when more bytes are needed.
    ///
    /// - Throws: `WebSocketFrameError` once events before the bad frame are returned; then on every call.
    public mutating func next() throws(WebSocketFrameError) -> WebSocketEvent? {
        guard eventIndex < events.count else {
            events.removeAll(keepingCapacity: true)
            eventIndex = 0
            if let failure { throw failure }
            return nil
        }
        defer { eventIndex += 1 }
        return events[eventIndex]
    }

    /// Takes header bytes until the header is complete, then starts its payload.
    private mutating func consumeHeader(_ rest: inout ArraySlice<UInt8>) throws(WebSocketFrameError) {
        while header.count < headerLength, let byte = rest.first {
            header.append(byte)
            rest.removeFirst()
        }
        guard header.count >= 2, header.count == headerLength else { return }
        let frame = try parseHeader()
        let maskingKey = frame.masked ? Array(header.suffix(4)) : []
        header.removeAll(keepingCapacity: true)
        payload = FramePayload(frame: frame, maskingKey: maskingKey)
        if frame.payloadLength == 0 { completeFrame() }
    }

    /// The header's full length, known once its first two bytes are in.
    private var headerLength: Int {
        guard header.count >= 2 else { return 2 }
        let lengthCode = header[1] & 0x7F
        let extended = lengthCode == 126 ? 2 : lengthCode == 127 ? 8 : 0
        return 2 + extended + (header[1] & 0x80 != 0 ? 4 : 0)
    }

    /// Reads a complete header and checks it against §5.2 and §5.5.
    private func parseHeader() throws(WebSocketFrameError) -> WebSocketFrame {
        let opcode = WebSocketOpcode(rawValue: header[0])
        let fin = header[0] & 0x80 != 0
        let lengthCode = header[1] & 0x7F
        var length = UInt64(lengthCode)
        if lengthCode >= 126 {
            let count = lengthCode == 126 ? 2 : 8
            length = header[2..<(2 + count)].reduce(0) { $0 << 8 | UInt64($1) }
            // §5.2: "the most significant bit MUST be 0" in the 64-bit length.
            if count == 8 && length >> 63 != 0 {
                throw WebSocketFrameError(reason: "64-bit payload length has its most significant bit set")
            }
        }
        guard opcode.isDefined else { throw WebSocketFrameError(reason: "reserved \(opcode)") }
        // §5.5: "All control frames MUST have a payload length of 125 bytes or less and MUST NOT be fragmented."
        if opcode.isControl && !fin { throw WebSocketFrameError(reason: "control frame is fragmented") }
        if opcode.isControl && length > 125 {
            throw WebSocketFrameError(reason: "control frame payload longer than 125 bytes")
        }
        if opcode == .continuation && message == nil {
            throw WebSocketFrameError(reason: "continuation frame without a message to continue")
        }
        if !opcode.isControl && opcode != .continuation && message != nil {
            throw WebSocketFrameError(reason: "new data frame before the fragmented message ended")
        }
        return WebSocketFrame(
            fin: fin, reservedBits: (header[0] >> 4) & 0x07, opcode: opcode, masked: header[1] & 0x80 != 0,
            payloadLength: length, payloadPrefix: [])
    }

    /// Counts payload bytes, unmasking only those kept for the prefix.
    private mutating func consumePayload(_ rest: inout ArraySlice<UInt8>) {
        guard var current = payload else { return }
        let wanted = current.frame.payloadLength - current.received
        let n = Int(min(UInt64(rest.count), wanted))
        let keep = max(0, min(n, prefixLimit - current.frame.payloadPrefix.count))
        if streamingPayload && !current.frame.opcode.isControl && n > 0 {
            let bytes = Self.unmasked(rest.prefix(n), key: current.maskingKey, at: current.received)
            current.frame.payloadPrefix += bytes.prefix(keep)
            var header = current.frame
            header.payloadPrefix = []
            events.append(.payload(header, bytes))
        } else {
            current.frame.payloadPrefix += Self.unmasked(rest.prefix(keep), key: current.maskingKey, at: current.received)
        }
        current.received += UInt64(n)
        rest.removeFirst(n)
        payload = current
        if current.received == current.frame.payloadLength { completeFrame() }
    }

    /// `bytes` of a payload unmasked (§5.3), the first of them at `offset` in the payload.
    private static func unmasked(_ bytes: ArraySlice<UInt8>, key: [UInt8], at offset: UInt64) -> [UInt8] {
        var result = Array(bytes)
        guard !key.isEmpty else { return result }
        let start = Int(offset % 4)
        for index in result.indices { result[index] ^= key[(start + index) % 4] }
        return result
    }

    /// Reports the finished frame, and its message when the frame ends one.
    private mutating func completeFrame() {
        guard let frame = payload?.frame else { return }
        payload = nil
        events.append(.frame(frame))
        if frame.opcode.isControl {
            let control = WebSocketMessage(
                opcode: frame.opcode, length: frame.payloadLength, prefix: frame.payloadPrefix, frameCount: 1)
            events.append(.message(control))
            return
        }
        var current = message ?? WebSocketMessage(opcode: frame.opcode, length: 0, prefix: [], frameCount: 0,
                                                  reservedBits: frame.reservedBits)
        current.length += frame.payloadLength
        current.prefix.append(contentsOf: frame.payloadPrefix.prefix(max(0, prefixLimit - current.prefix.count)))
        current.frameCount += 1
        if frame.fin {
            events.append(.message(current))
            message = nil
        } else {
            message = current
        }
    }
}
