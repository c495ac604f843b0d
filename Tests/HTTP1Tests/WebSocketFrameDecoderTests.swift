import Testing
@testable import HTTP1

@Suite struct WebSocketFrameDecoderTests {
    /// Encodes one frame, masking the payload with `mask` when given.
    private static func frame(
        fin: Bool = true, opcode: UInt8, payload: [UInt8], mask: [UInt8]? = nil, forceLengthCode: UInt8? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        let count = payload.count
        let code = forceLengthCode ?? (count < 126 ? UInt8(count) : count <= 0xFFFF ? 126 : 127)
        bytes.append(maskBit | code)
        if code == 126 { bytes += [UInt8(count >> 8), UInt8(count & 0xFF)] }
        if code == 127 { bytes += (0..<8).reversed().map { UInt8((UInt64(count) >> (8 * UInt64($0))) & 0xFF) } }
        if let mask {
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        } else {
            bytes += payload
        }
        return bytes
    }

    /// Decodes `bytes` fed whole and one byte at a time, asserting both give the same events.
    private static func decode(_ bytes: [UInt8], prefixLimit: Int = 256) throws -> [WebSocketEvent] {
        var whole = WebSocketFrameDecoder(prefixLimit: prefixLimit)
        whole.feed(bytes)
        var wholeEvents: [WebSocketEvent] = []
        while let event = try whole.next() { wholeEvents.append(event) }
        var single = WebSocketFrameDecoder(prefixLimit: prefixLimit)
        var singleEvents: [WebSocketEvent] = []
        for byte in bytes {
            single.feed([byte])
            while let event = try single.next() { singleEvents.append(event) }
        }
        #expect(singleEvents == wholeEvents, "one byte at a time gives the same events")
        return wholeEvents
    }

    @Test func unmaskedTextFrame() throws {
        let events = try Self.decode(Self.frame(opcode: 0x1, payload: Array("hi".utf8)))
        #expect(events == [
            .frame(WebSocketFrame(
                fin: true, opcode: .text, masked: false, payloadLength: 2, payloadPrefix: Array("hi".utf8))),
            .message(WebSocketMessage(opcode: .text, length: 2, prefix: Array("hi".utf8), frameCount: 1)),
        ])
    }

    @Test func maskedFrameIsUnmasked() throws {
        let payload = Array("Hello, masked world".utf8)
        let events = try Self.decode(Self.frame(opcode: 0x1, payload: payload, mask: [0x37, 0xFA, 0x21, 0x3D]))
        #expect(events.first == .frame(WebSocketFrame(
            fin: true, opcode: .text, masked: true, payloadLength: UInt64(payload.count), payloadPrefix: payload)))
    }

    @Test func sixteenBitLengthKeepsOnlyThePrefix() throws {
        let payload = (0..<300).map { UInt8($0 & 0xFF) }
        let events = try Self.decode(Self.frame(opcode: 0x2, payload: payload, mask: [1, 2, 3, 4]), prefixLimit: 10)
        #expect(events == [
            .frame(WebSocketFrame(fin: true, opcode: .binary, masked: true, payloadLength: 300,
                                  payloadPrefix: Array(payload.prefix(10)))),
            .message(WebSocketMessage(opcode: .binary, length: 300, prefix: Array(payload.prefix(10)), frameCount: 1)),
        ])
    }

    @Test func sixtyFourBitLength() throws {
        let payload = [UInt8](repeating: 0x5A, count: 70_000)
        let events = try Self.decode(Self.frame(opcode: 0x2, payload: payload), prefixLimit: 4)
        #expect(events.last == .message(
            WebSocketMessage(opcode: .binary, length: 70_000, prefix: [0x5A, 0x5A, 0x5A, 0x5A], frameCount: 1)))
    }

    @Test func sixtyFourBitLengthIsCountedWithoutBuffering() throws {
        var decoder = WebSocketFrameDecoder(prefixLimit: 3)
        // Header declaring 2^40 bytes; feed 1 MiB of it and expect no event yet, then no error.
        decoder.feed([0x82, 127, 0, 0, 0x01, 0, 0, 0, 0, 0])
        for _ in 0..<16 { decoder.feed([UInt8](repeating: 7, count: 65536)) }
        #expect(try decoder.next() == nil)
    }

    @Test func fragmentedMessageWithInterleavedPing() throws {
        let mask: [UInt8] = [9, 8, 7, 6]
        let bytes = Self.frame(fin: false, opcode: 0x1, payload: Array("Hel".utf8), mask: mask)
            + Self.frame(opcode: 0x9, payload: Array("p".utf8), mask: mask)
            + Self.frame(fin: false, opcode: 0x0, payload: Array("lo ".utf8), mask: mask)
            + Self.frame(opcode: 0x0, payload: Array("there".utf8), mask: mask)
        let events = try Self.decode(bytes, prefixLimit: 8)
        let messages = events.compactMap { event -> WebSocketMessage? in
            if case .message(let message) = event { message } else { nil }
        }
        #expect(events.count == 6, "four frames, the ping's message and the text message")
        #expect(messages == [
            WebSocketMessage(opcode: .ping, length: 1, prefix: Array("p".utf8), frameCount: 1),
            WebSocketMessage(opcode: .text, length: 11, prefix: Array("Hello th".utf8), frameCount: 3),
        ])
    }

    @Test func emptyCloseFrame() throws {
        let events = try Self.decode([0x88, 0x00])
        #expect(events == [
            .frame(WebSocketFrame(fin: true, opcode: .close, masked: false, payloadLength: 0, payloadPrefix: [])),
            .message(WebSocketMessage(opcode: .close, length: 0, prefix: [], frameCount: 1)),
        ])
    }

    @Test(arguments: [
        ([0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126), "control frame payload longer than 125 bytes"),
        ([0x09, 0x00], "control frame is fragmented"),
        ([0x80, 0x00], "continuation frame without a message to continue"),
        ([0x01, 0x01, 0x61, 0x81, 0x00], "new data frame before the fragmented message ended"),
        ([0x83, 0x00], "reserved opcode 0x3"),
        ([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], "64-bit payload length has its most significant bit set"),
    ] as [([UInt8], String)])
    func protocolViolationsAreReported(bytes: [UInt8], reason: String) {
        var decoder = WebSocketFrameDecoder()
        decoder.feed(bytes)
        #expect(throws: WebSocketFrameError(reason: reason)) {
            while try decoder.next() != nil {}
        }
    }

    @Test func eventsBeforeAnErrorAreStillReturned() throws {
        var decoder = WebSocketFrameDecoder()
        decoder.feed([0x81, 0x01, 0x61, 0x80, 0x00, 0x81, 0x00])
        #expect(try decoder.next() != nil)
        #expect(try decoder.next() != nil)
        #expect(throws: WebSocketFrameError.self) { try decoder.next() }
        decoder.feed([0x81, 0x00])
        #expect(throws: WebSocketFrameError.self) { try decoder.next() }
    }
}
