import Foundation
import HTTP1

/// After `101 Switching Protocols` to a WebSocket upgrade: relays frames both ways untouched
/// and logs each message (direction, opcode, length, first bytes) in the flow.
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
            let log = MessageLog(limit: Self.messageLimit, inflating: compressed)
            var clientFrames = WebSocketFrameDecoder(streamingPayload: compressed)
            var serverFrames = WebSocketFrameDecoder(streamingPayload: compressed)
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
final class MessageLog {
    private(set) var records: [Flow.WebSocketMessageRecord] = []
    private let limit: Int
    /// Per direction, when permessage-deflate was negotiated.
    private let inflaters: [String: WebSocketMessageInflater]
    /// Per direction: whether the message whose frames are arriving is compressed (RSV1 on its first frame).
    private var compressing: [String: Bool] = [:]

    init(limit: Int, inflating: Bool = false) {
        self.limit = limit
        inflaters = inflating ? ["client_to_server": WebSocketMessageInflater(prefixLimit: 256),
                                 "server_to_client": WebSocketMessageInflater(prefixLimit: 256)] : [:]
    }

    func consume(_ bytes: some Collection<UInt8>, decoder: inout WebSocketFrameDecoder, direction: String) {
        guard !bytes.isEmpty else { return }
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
                let prefix = inflated?.prefix ?? message.prefix
                let text = message.opcode == .text ? String(validating: prefix, as: UTF8.self) : nil
                var record = Flow.WebSocketMessageRecord(
                    direction: direction, opcode: message.opcode.description, length: inflated?.length ?? Int(message.length),
                    text: text, base64: text == nil && !prefix.isEmpty ? Data(prefix).base64EncodedString() : nil)
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
}

extension MessageLog {
    func consume(_ raw: UnsafeRawBufferPointer, decoder: inout WebSocketFrameDecoder, direction: String) {
        consume(Array(raw), decoder: &decoder, direction: direction)
    }
}
