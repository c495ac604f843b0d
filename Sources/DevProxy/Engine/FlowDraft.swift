import CertAuthority
import Foundation
import HTTPTypes
import HTTP1

/// A flow being assembled while its exchange runs; `finish` stamps the end and hands it on.
struct FlowDraft {
    var flow: Flow
    let startedAt: Date

    private static let counter = Counter()
    /// A per-process prefix so ids from different runs do not collide in merged logs.
    private static let runPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)

    /// A new draft, everything known at its start given at once: the flow is built in one piece
    /// (setting fields one by one afterwards made the optimizer copy the whole draft, ~35
    /// reference counts each way, twice per flow).
    /// - Parameters:
    ///   - process: the client's process on this machine, when known (`SocketOwners`).
    ///   - startedAt: when it began: now for an exchange, the connection's accept for a
    ///     flow of the connection itself (one that closed without a request began when it opened).
    init(client: String, process: Flow.ClientProcess? = nil, listener: Flow.ListenerInfo? = nil, mode: Flow.Mode,
         host: String, port: Int,
         tls: Flow.TLSInfo? = nil, request: Flow.Request? = nil, signer: Flow.SignerInfo? = nil,
         persona: String? = nil, insecureUpstream: Bool? = nil, h2: Flow.HTTP2Info? = nil, startedAt: Date = Date()) {
        self.startedAt = startedAt
        flow = Flow(id: "\(Self.runPrefix)-\(Self.counter.next())", started: ISO8601.milliseconds(startedAt),
                    ended: "", client: client, mode: mode, server: Flow.Server(host: host, port: port, address: nil),
                    tls: tls, request: request, response: nil, timings: .none, signer: signer, persona: persona,
                    insecureUpstream: insecureUpstream, websocket: nil, tunnel: nil, h2: h2, listener: listener,
                    error: nil, clientProcess: process)
    }

    /// Records a failure; the first one recorded wins (it is the cause, later ones are effects).
    mutating func fail(_ kind: FlowErrorKind, _ message: String, alert: String? = nil) {
        guard flow.error == nil else { return }
        flow.error = Flow.FlowError(kind: kind.rawValue, message: message, alert: alert,
                                    recordedAt: ProcessInfo.processInfo.systemUptime)
    }

    /// How many informational responses a flow keeps; later ones are only counted
    /// (`informational_not_kept`): an origin sending 10,000 `103`s must not grow the record.
    static var informationalLimit: Int { 20 }

    /// Records an informational (1xx) response the origin sent before its final one; `100
    /// Continue` (the body's go-ahead) and `101` (a switch, whose record is the WebSocket's) are not.
    mutating func recordInformational(_ response: HTTPResponse, redact: [String]) {
        guard (102..<200).contains(response.status) else { return }
        if (flow.informational?.count ?? 0) >= Self.informationalLimit {
            flow.informationalNotKept = (flow.informationalNotKept ?? 0) + 1
            return
        }
        let record = Flow.InformationalResponse(status: response.status, reason: response.reason.map(ObsText.readable),
                                                headers: Self.headerPairs(response.fields, redact: redact),
                                                time: ISO8601.milliseconds(Date()))
        if flow.informational == nil {
            flow.informational = [record]
        } else {
            flow.informational?.append(record)
        }
    }

    /// The finished record. Consuming: the draft's last use hands its flow on without a copy.
    consuming func finished() -> Flow {
        flow.ended = ISO8601.milliseconds(Date())
        return flow
    }

    /// The finished record, moved out of a draft that stays behind (one held by a class): the
    /// draft is left with an empty flow instead of copying this one (~35 reference counts).
    mutating func takeFinished() -> Flow {
        flow.ended = ISO8601.milliseconds(Date())
        var taken = Self.emptyFlow
        swap(&taken, &flow)
        return taken
    }

    private static let emptyFlow = Flow(id: "", started: "", ended: "", client: "", mode: .http,
                                        server: Flow.Server(host: "", port: 0, address: nil), tls: nil, request: nil,
                                        response: nil, timings: .none, signer: nil, persona: nil, insecureUpstream: nil,
                                        websocket: nil, tunnel: nil, error: nil)

    /// Headers as the log stores them: ordered `[name, value]` pairs, redacted names masked.
    /// Proxy-Authorization is always masked: it holds the password to this proxy itself.
    static func headerPairs(_ headers: HTTPHeaders, redact: [String]) -> FieldPairs {
        var pairs = FieldPairs()
        pairs.reserveCapacity(headers.count)
        for field in headers { appendPair(field.name, field.value, redact: redact, to: &pairs) }
        return pairs
    }

    /// Appends one field as the log stores it, its value masked when its name is redacted.
    static func appendPair(_ name: String, _ value: String, redact: [String], to pairs: inout FieldPairs) {
        pairs.append(name: name, value: isMasked(name, redact: redact) ? "<redacted>" : ObsText.readable(value))
    }

    /// Whether the log masks the value of a field named `name`.
    static func isMasked(_ name: String, redact: [String]) -> Bool {
        name.equalsCaseInsensitive("Proxy-Authorization") || redact.contains { $0.equalsCaseInsensitive(name) }
    }

    /// Milliseconds since `start`, to the microsecond.
    static func milliseconds(since start: Date) -> Double {
        milliseconds(from: start, to: Date())
    }

    /// Milliseconds between two instants, to the microsecond.
    static func milliseconds(from start: Date, to end: Date) -> Double {
        (end.timeIntervalSince(start) * 1000 * 1000).rounded() / 1000
    }
}

/// A thread-safe increasing counter.
final class Counter: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
