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
            let recording = WebSocketRecording(inflating: WebSocketInflation.negotiated(head.headers),
                                               dataBudget: context.configuration.bodyLimit)
            recording.consume(fromClient, fromClient: true)
            recording.consume(fromServer, fromClient: false)
            // A socket left open (a chat, a feed) is shown with its messages so far while it runs
            // (`ProgressSchedule`, `FlowSink.progressed`).
            let opened = Date()
            var schedule = ProgressSchedule()
            let server = context.server
            let outcome = Relay(a: context.client.stream, b: upstream.stream).run(
                observeAToB: { recording.consume($0, fromClient: true) },
                observeBToA: { recording.consume($0, fromClient: false) },
                tickInterval: server.showsRunningFlows ? ProgressSchedule.interval : nil,
                tick: {
                    let records = recording.records
                    guard !records.isEmpty, schedule.isDue(mark: records.count, since: opened, now: Date()) else {
                        return
                    }
                    var snapshot = draft.flow
                    snapshot.websocket = records
                    server.progressed(snapshot)
                })
            draft.flow.websocket = recording.records
            draft.flow.websocketEnd = recording.end
            // After both close frames (RFC 6455 §7) the WebSocket has ended: how either side then
            // drops its connection (a bare FIN, no TLS close_notify) is no failure of it.
            if let error = outcome.error, !recording.closedBothWays {
                // A timeout is a peer that stopped answering keepalive probes (quiet alone ends nothing).
                draft.fail(.upstreamReset, "WebSocket relay ended: \(error)")
            } else if recording.end.code == nil, recording.end.by == nil, let clientFirst = outcome.aClosedFirst {
                // No Close frame either way: the peers see 1006 (abnormal closure), which the flow
                // did not say at all (no error, nothing of how it ended).
                let side = clientFirst ? "client" : "server"
                draft.fail(clientFirst ? .clientClosed : .upstreamClosed,
                           "the \(side) closed the connection without a WebSocket Close frame: the other side sees 1006 "
                           + "(abnormal closure)")
            }
        } catch {
            draft.fail(.clientClosed, "the WebSocket handshake could not be relayed: \(error)")
        }
    }
}

/// One WebSocket's recording, both directions: the frames each way decoded into `MessageLog`'s
/// messages. Fed by the HTTP/1.1 relay after a `101` (`WebSocketSession`) and by an HTTP/2
/// stream's DATA after a `2xx` to an extended CONNECT (RFC 8441, `HTTP2ProxyConnection`): the
/// frames are the same either way (§5), only what carries them differs.
final class WebSocketRecording {
    private let log: MessageLog
    private var clientFrames: WebSocketFrameDecoder
    private var serverFrames: WebSocketFrameDecoder

    /// - Parameters:
    ///   - inflating: permessage-deflate was negotiated (`WebSocketInflation`).
    ///   - dataBudget: message bytes kept whole (the flow's `--body-limit`, see `MessageLog`).
    init(inflating: Bool, dataBudget: Int) {
        log = MessageLog(limit: WebSocketSession.messageLimit, inflating: inflating, dataBudget: dataBudget)
        clientFrames = WebSocketFrameDecoder(prefixLimit: log.dataLimit, streamingPayload: inflating)
        serverFrames = WebSocketFrameDecoder(prefixLimit: log.dataLimit, streamingPayload: inflating)
    }

    /// Bytes as they passed, from the client (`fromClient`) or from the server.
    func consume(_ bytes: some Collection<UInt8>, fromClient: Bool) {
        if fromClient {
            log.consume(bytes, decoder: &clientFrames, direction: "client_to_server")
        } else {
            log.consume(bytes, decoder: &serverFrames, direction: "server_to_client")
        }
    }

    /// The messages so far.
    var records: [Flow.WebSocketMessageRecord] { log.records }

    /// Both sides sent a Close frame: the WebSocket ended cleanly (RFC 6455 §7.1.2), whatever
    /// becomes of what carried it afterwards (a connection closed or a stream reset at once).
    var closedBothWays: Bool { log.closed.count == 2 }

    /// How it ended so far: the first Close frame, and the messages past the record's limit.
    var end: Flow.WebSocketEnd {
        Flow.WebSocketEnd(by: log.firstClose.map { $0.direction == "client_to_server" ? "client" : "server" },
                          code: log.firstClose?.code, reason: log.firstClose?.reason, clean: closedBothWays,
                          messagesNotKept: log.notKept > 0 ? log.notKept : nil)
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
    /// The directions a Close frame has gone (recorded or past `limit`).
    private(set) var closed: Set<String> = []
    /// The first Close frame: its direction, and the code and reason it carried (RFC 6455 §5.5.1).
    private(set) var firstClose: (direction: String, code: Int?, reason: String?)?
    /// Messages past `limit`, not kept (Close frames are kept whatever the count).
    private(set) var notKept = 0

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
                if message.opcode == .close {
                    closed.insert(direction)
                    if firstClose == nil {
                        let payload = message.prefix
                        let code = payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : nil
                        let reason = payload.count > 2 ? String(decoding: payload.dropFirst(2), as: UTF8.self) : nil
                        firstClose = (direction, code, reason)
                    }
                }
                guard records.count < limit || message.opcode == .close else {
                    notKept += 1
                    continue
                }
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
