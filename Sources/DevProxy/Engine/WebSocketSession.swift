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
            let log = MessageLog(limit: Self.messageLimit)
            var clientFrames = WebSocketFrameDecoder()
            var serverFrames = WebSocketFrameDecoder()
            log.consume(fromClient, decoder: &clientFrames, direction: "client_to_server")
            log.consume(fromServer, decoder: &serverFrames, direction: "server_to_client")
            // A socket left open (a chat, a feed) is shown with its messages so far while it runs
            // (`ProgressSchedule`, `FlowSink.progressed`).
            let opened = Date()
            var schedule = ProgressSchedule()
            let server = context.server
            let outcome = Relay(a: context.client.stream, b: upstream.stream, idleTimeout: context.configuration.idleTimeout).run(
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
            if let error = outcome.error, !error.isNetworkTimeout {
                draft.fail(.upstreamReset, "WebSocket relay ended: \(error)")
            }
        } catch {
            draft.fail(.clientClosed, "the WebSocket handshake could not be relayed: \(error)")
        }
    }
}

/// Collects WebSocket messages for the flow record.
final class MessageLog {
    private(set) var records: [Flow.WebSocketMessageRecord] = []
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func consume(_ bytes: some Collection<UInt8>, decoder: inout WebSocketFrameDecoder, direction: String) {
        guard !bytes.isEmpty else { return }
        decoder.feed(bytes)
        while let event = try? decoder.next() {
            guard case .message(let message) = event, records.count < limit else { continue }
            let text = message.opcode == .text ? String(validating: message.prefix, as: UTF8.self) : nil
            records.append(Flow.WebSocketMessageRecord(
                direction: direction, opcode: message.opcode.description, length: Int(message.length),
                text: text, base64: text == nil && !message.prefix.isEmpty ? Data(message.prefix).base64EncodedString() : nil))
        }
    }
}

extension MessageLog {
    func consume(_ raw: UnsafeRawBufferPointer, decoder: inout WebSocketFrameDecoder, direction: String) {
        consume(Array(raw), decoder: &decoder, direction: direction)
    }
}
