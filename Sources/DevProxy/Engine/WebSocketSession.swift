import Foundation
import HTTP1

/// After `101 Switching Protocols` to a WebSocket upgrade: relays frames both ways untouched
/// and logs each message (direction, opcode, length, its data) in the flow (`MessageLog`).
struct WebSocketSession {
    let context: ExchangeContext
    let upstream: UpstreamConnection
    /// Most messages kept per flow; a chat socket left open for hours must not grow the
    /// record without bound. Later messages are counted in the flow's error-free summary.
    static let messageLimit = 1000

    func run(head: HTTPResponseHead, draft: inout FlowDraft) {
        draft.flow.mode = .websocket
        var outbound = head
        outbound.headers.removeHopByHop(relayingUpgrade: true)
        do {
            try context.client.stream.write(HTTP1Serializer.serialize(outbound))
            // Bytes either side sent right after the handshake are already in the parsers.
            let fromClient = context.client.parser.takeRemainingBytes()
            let fromServer = upstream.reader.parser.takeRemainingBytes()
            if !fromClient.isEmpty { try upstream.stream.write(fromClient) }
            if !fromServer.isEmpty { try context.client.stream.write(fromServer) }
            let compressed = WebSocketInflation.negotiated(head.headers)
            let log = MessageLog(limit: Self.messageLimit, inflating: compressed,
                                 dataBudget: context.configuration.bodyLimit)
            var clientFrames = WebSocketFrameDecoder(prefixLimit: log.dataLimit, streamingPayload: compressed)
            var serverFrames = WebSocketFrameDecoder(prefixLimit: log.dataLimit, streamingPayload: compressed)
            log.consume(fromClient, decoder: &clientFrames, direction: "client_to_server")
            log.consume(fromServer, decoder: &serverFrames, direction: "server_to_client")
            // A socket left open (a chat, a feed) is shown with its messages so far while it runs
            // (`ProgressSchedule`, `FlowSink.progressed`).
            let opened = Date()
            var schedule = ProgressSchedule()
            let server = context.server
            let outcome = Relay(a: context.client.stream, b: upstream.stream).run(
                observeAToB: { log.consume($0, decoder: &clientFrames, direction: "client_to_server") },
                observeBToA: { log.consume($0, decoder: &serverFrames, direction: "server_to_client") },
                tickInterval: server.showsRunningFlows ? ProgressSchedule.interval : nil,
                tick: {
                    guard !log.records.isEmpty, schedule.isDue(mark: log.records.count, since: opened, now: Date()) else {
                        return
                    }
                    var snapshot = draft.flow
                    snapshot.websocket = log.records
                    server.progressed(snapshot)
                })
            draft.flow.websocket = log.records
            if let error = outcome.error {
                // A timeout is a peer that stopped answering keepalive probes (quiet alone ends nothing).
                draft.fail(.upstreamReset, "WebSocket relay ended: \(error)")
            }
        } catch {
            draft.fail(.clientClosed, "the WebSocket handshake could not be relayed: \(error)")
        }
    }
}

/// Collects WebSocket messages for the flow record; with permessage-deflate (`inflating`), a
/// compressed message is recorded as it inflates (`compressed_length` holds its size on the wire).
///
/// A message's data is kept whole up to `messageDataLimit` (64 KiB; `truncated` marks a longer
/// one, cut there) while the messages kept so far hold less than `dataBudget` bytes (the flow's
/// `--body-limit`, 1 MiB by default, as a body is); after that each message keeps its first
/// `previewBytes` (256). A text message is cut between characters, so it stays text. What a socket
/// left open for hours holds is then bounded by the budget and `limit` messages.
final class MessageLog {
    private(set) var records: [Flow.WebSocketMessageRecord] = []
    private let limit: Int
    /// Per direction, when permessage-deflate was negotiated.
    private let inflaters: [String: WebSocketMessageInflater]
    /// Per direction: whether the message whose frames are arriving is compressed (RSV1 on its first frame).
    private var compressing: [String: Bool] = [:]
    /// Message data bytes the record may still take whole.
    private var budgetLeft: Int

    static let messageDataLimit = 64 * 1024
    static let previewBytes = 256

    /// Bytes of each message the frame decoders and inflaters keep now: a whole message's while
    /// the budget lasts, a preview's after.
    var dataLimit: Int { Self.dataLimit(budgetLeft: budgetLeft) }

    private static func dataLimit(budgetLeft: Int) -> Int {
        budgetLeft > previewBytes ? messageDataLimit : previewBytes
    }

    init(limit: Int, inflating: Bool = false, dataBudget: Int = 0) {
        self.limit = limit
        budgetLeft = dataBudget
        let kept = Self.dataLimit(budgetLeft: dataBudget)
        inflaters = inflating ? ["client_to_server": WebSocketMessageInflater(prefixLimit: kept),
                                 "server_to_client": WebSocketMessageInflater(prefixLimit: kept)] : [:]
    }

    func consume(_ bytes: some Collection<UInt8>, decoder: inout WebSocketFrameDecoder, direction: String) {
        guard !bytes.isEmpty else { return }
        // Once the budget is spent, the decoder keeps only what a preview needs.
        decoder.prefixLimit = min(decoder.prefixLimit, dataLimit)
        decoder.feed(bytes)
        while let event = try? decoder.next() {
            switch event {
            case .payload(let frame, let payload):
                // Every compressed message goes through the inflater, recorded or not: the next
                // one may refer back into its window.
                if frame.opcode != .continuation { compressing[direction] = frame.reservedBits & 0b100 != 0 }
                if compressing[direction] == true { inflaters[direction]?.feed(payload) }
            case .message(let message):
                let compressed = !message.opcode.isControl && message.reservedBits & 0b100 != 0
                var inflated: (prefix: [UInt8], length: Int)?
                var failure: String?
                if compressed, let inflater = inflaters[direction] {
                    inflated = inflater.finishMessage()
                    failure = inflated == nil ? inflater.failure : nil
                }
                compressing[direction] = nil
                guard records.count < limit else { continue }
                let length = inflated?.length ?? Int(message.length)
                let (data, text) = kept(inflated?.prefix ?? message.prefix, length: length, isText: message.opcode == .text)
                var record = Flow.WebSocketMessageRecord(
                    direction: direction, opcode: message.opcode.description, length: length,
                    text: text, base64: text == nil && !data.isEmpty ? Data(data).base64EncodedString() : nil)
                if data.count < length { record.truncated = true }
                record.time = (Date().timeIntervalSince1970 * 1000).rounded() / 1000
                if compressed {
                    record.compressedLength = Int(message.length)
                    record.decodeError = failure ?? (inflaters[direction] == nil ? "RSV1 set without permessage-deflate" : nil)
                }
                records.append(record)
            case .frame:
                continue
            }
        }
    }

    /// What the record keeps of a message of `length` bytes whose first bytes are `data`: its
    /// bytes, and their text for a text message (cut between characters) when they are UTF-8.
    /// Takes them from the budget, and lowers what the decoders keep once it is spent.
    private func kept(_ data: [UInt8], length: Int, isText: Bool) -> (bytes: [UInt8], text: String?) {
        let room = max(Self.previewBytes, budgetLeft)
        var bytes = data.count > room ? Array(data.prefix(room)) : data
        if isText && bytes.count < length { bytes.removeLast(bytes.count - BodyText.completeUTF8Prefix(bytes)) }
        budgetLeft -= bytes.count
        for inflater in inflaters.values where inflater.prefixLimit > dataLimit { inflater.prefixLimit = dataLimit }
        return (bytes, isText ? String(validating: bytes, as: UTF8.self) : nil)
    }
}

extension MessageLog {
    func consume(_ raw: UnsafeRawBufferPointer, decoder: inout WebSocketFrameDecoder, direction: String) {
        consume(Array(raw), decoder: &decoder, direction: direction)
    }
}
