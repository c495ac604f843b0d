@testable import DevProxy
import Foundation
import HTTP1
import Testing

/// What a WebSocket flow keeps of each message (`MessageLog`): the data whole up to 64 KiB while
/// the flow's budget (its `--body-limit`) lasts, then the first 256 bytes; `truncated` whenever
/// less than the whole message is kept; text cut between characters.
@Suite struct WebSocketMessageLogTests {
    @Test func messagesAreKeptWholeUpTo64KiB() {
        let log = MessageLog(limit: 100, dataBudget: 1 << 20)
        var decoder = WebSocketFrameDecoder(prefixLimit: log.dataLimit)
        let small = String(repeating: "x", count: 10_000)
        // 23,334 three-byte characters: 70,002 bytes, cut at 64 KiB inside a character.
        let euros = String(repeating: "€", count: 23_334)
        log.consume(Self.frame(opcode: 1, Array(small.utf8)), decoder: &decoder, direction: "server_to_client")
        log.consume(Self.frame(opcode: 1, Array(euros.utf8)), decoder: &decoder, direction: "server_to_client")
        #expect(log.records.count == 2)
        #expect(log.records[0].text == small && log.records[0].truncated == nil && log.records[0].length == 10_000)
        #expect(log.records[1].length == 70_002 && log.records[1].truncated == true)
        #expect(log.records[1].text == String(repeating: "€", count: 21_845), "65,535 bytes: the last whole character")
        #expect(log.records[1].base64 == nil)
    }

    @Test func theBudgetLeavesLaterMessagesTheirFirst256Bytes() throws {
        let log = MessageLog(limit: 100, dataBudget: 20_000)
        var decoder = WebSocketFrameDecoder(prefixLimit: log.dataLimit)
        let bytes = (0..<15_000).map { UInt8($0 % 251) }
        log.consume(Self.frame(opcode: 2, Array(bytes.prefix(10_000))), decoder: &decoder, direction: "client_to_server")
        log.consume(Self.frame(opcode: 2, bytes), decoder: &decoder, direction: "client_to_server")
        log.consume(Self.frame(opcode: 2, bytes), decoder: &decoder, direction: "client_to_server")
        let kept = try log.records.map { try #require(Data(base64Encoded: $0.base64 ?? "")) }
        #expect(kept.map(\.count) == [10_000, 10_000, 256])
        #expect(kept.allSatisfy { Array($0) == Array(bytes.prefix($0.count)) })
        #expect(log.records.map(\.truncated) == [nil, true, true])
        #expect(log.records.map(\.length) == [10_000, 15_000, 15_000])
        #expect(decoder.prefixLimit == MessageLog.previewBytes, "the decoder keeps no more than a preview now")
    }

    /// `--body-limit 0`: every message keeps its first 256 bytes, as before there was a budget.
    @Test func withoutABudgetEachMessageKeeps256Bytes() {
        let log = MessageLog(limit: 100, dataBudget: 0)
        var decoder = WebSocketFrameDecoder(prefixLimit: log.dataLimit)
        log.consume(Self.frame(opcode: 1, Array(repeating: UInt8(ascii: "a"), count: 300)), decoder: &decoder,
                    direction: "server_to_client")
        log.consume(Self.frame(opcode: 1, Array("short".utf8)), decoder: &decoder, direction: "server_to_client")
        #expect(log.records.map { $0.text?.utf8.count } == [256, 5])
        #expect(log.records.map(\.truncated) == [true, nil])
    }

    /// A message in frames is kept across them up to 64 KiB; the budget running out in the middle
    /// of one (the decoder's limit lowered under it) keeps what it had.
    @Test func fragmentedMessagesAndABudgetSpentMidMessage() {
        let log = MessageLog(limit: 100, dataBudget: 70_000)
        var decoder = WebSocketFrameDecoder(prefixLimit: log.dataLimit)
        let part = Array(repeating: UInt8(ascii: "b"), count: 40_000)
        log.consume(Self.frame(opcode: 1, part, fin: false), decoder: &decoder, direction: "client_to_server")
        log.consume(Self.frame(opcode: 0, part), decoder: &decoder, direction: "client_to_server")
        #expect(log.records.first?.length == 80_000 && log.records.first?.text?.utf8.count == 65_536)
        #expect(log.records.first?.truncated == true)
        // 4,464 bytes of budget left: the next message starts whole, then the budget is gone.
        log.consume(Self.frame(opcode: 1, part, fin: false), decoder: &decoder, direction: "client_to_server")
        log.consume(Self.frame(opcode: 0, part), decoder: &decoder, direction: "client_to_server")
        #expect(log.records.count == 2 && log.records[1].text?.utf8.count == 4_464 && log.records[1].truncated == true)
        log.consume(Self.frame(opcode: 1, part, fin: false), decoder: &decoder, direction: "client_to_server")
        log.consume(Self.frame(opcode: 0, part), decoder: &decoder, direction: "client_to_server")
        #expect(log.records.count == 3 && log.records[2].text?.utf8.count == 256)
    }

    /// One unmasked frame (a server's) with the length in the form RFC 6455 §5.2 gives it.
    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: bytes.append(UInt8(payload.count))
        case ..<65_536: bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: bytes += [127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xFF) }
        }
        return bytes + payload
    }
}
