import Foundation
import Synchronization

/// Breakpoints on requests and responses: mitmproxy's `intercept`, Charles's and Proxyman's
/// breakpoints. As in mitmproxy, the filter is asked twice of a flow: when its request is ready to
/// go (no response yet: `~q` passes, `~s`, `~c`, `~hs`, `~ts` do not) and when its response's head
/// has come (`~q` no longer passes); so `~d api.example.com` holds both, `~d api.example.com & ~q`
/// the request alone and `~d api.example.com & ~s` the response alone. A held response comes with
/// its whole body (after `--modify-headers` and `--modify-body` made it what the client would get)
/// and is resumed as it came or edited (status, header fields, body), or aborted (the client gets
/// a 502 that says so). A request that passes the filter (`devproxy run --intercept FILTER`, or the web UI's Intercept
/// box, which changes it while the proxy runs) is held, after `--map-remote`, `--map-local` and
/// `--modify-headers` made it what would be sent, with its whole body, until the web UI or its
/// API resumes it (as it came, or edited: method, URL, header fields, body) or aborts it (the
/// client gets a 502 that says so). The filter is the web UI's language on the request, as a map
/// rule's is (`MapRequestFilter`). Not held: a request a local route answers (`--map-local`, the
/// onboarding site), a replay from the web UI (as mitmproxy does not intercept replays), a body
/// over `maxBody` (the flow says so), WebSocket and tunnel traffic.
///
/// One board per proxy, shared by every connection thread and the web UI. The engine checks
/// `isActive` (one atomic load) before anything else, so a proxy without a filter pays nothing.
public final class Intercepts: Sendable {
    /// Which half of a flow a breakpoint holds.
    public enum Phase: String, Sendable {
        /// The request, before it is sent upstream.
        case request
        /// The response, before it is sent to the client.
        case response
    }

    /// A held request or response, as the web UI shows and edits it.
    public struct Held: Sendable {
        /// The flow's id (`/api/flows/ID`); a flow is held at most once at a time.
        public let id: String
        /// The request's; for a held response, the request that was sent.
        public let method: String
        /// The absolute URL the request would go to (for a held response: went to).
        public let url: String
        /// `HTTP/1.1`, `HTTP/1.0` or `HTTP/2`: the client's side.
        public let httpVersion: String
        /// Header fields in order, names as sent (HTTP/2: lower case, no pseudo-headers): the
        /// request's, or for a held response the response's.
        public let headers: [HeaderField]
        /// The whole body, as sent (content-coded, if it was): the request's, or the response's.
        public let body: [UInt8]
        /// When it was held.
        public let since: Date
        /// The filter that held it.
        public let filter: String
        /// `request` or `response`.
        public let phase: Phase
        /// A held response's status; nil for a request.
        public let status: Int?

        public init(id: String, method: String, url: String, httpVersion: String, headers: [HeaderField],
                    body: [UInt8], since: Date = Date(), filter: String) {
            self.init(id: id, method: method, url: url, httpVersion: httpVersion, phase: .request, status: nil,
                      headers: headers, body: body, since: since, filter: filter)
        }

        /// A held response: `status`, `headers` and `body` are the response's as the client would
        /// get them; `method` and `url` the request's that was sent.
        public init(id: String, method: String, url: String, httpVersion: String, status: Int,
                    headers: [HeaderField], body: [UInt8], since: Date = Date(), filter: String) {
            self.init(id: id, method: method, url: url, httpVersion: httpVersion, phase: .response, status: status,
                      headers: headers, body: body, since: since, filter: filter)
        }

        private init(id: String, method: String, url: String, httpVersion: String, phase: Phase, status: Int?,
                     headers: [HeaderField], body: [UInt8], since: Date, filter: String) {
            self.id = id
            self.method = method
            self.url = url
            self.httpVersion = httpVersion
            self.headers = headers
            self.body = body
            self.since = since
            self.filter = filter
            self.phase = phase
            self.status = status
        }
    }

    /// One header field of a held or edited request.
    public struct HeaderField: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What the web UI changed before resuming; nil parts stay as they came. `method` and `url`
    /// are a request's to change, `status` a response's.
    public struct Edit: Sendable, Equatable {
        public var method: String?
        public var url: String?
        public var headers: [HeaderField]?
        public var body: [UInt8]?
        public var status: Int?

        public init(method: String? = nil, url: String? = nil, headers: [HeaderField]? = nil, body: [UInt8]? = nil,
                    status: Int? = nil) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
            self.status = status
        }
    }

    /// A response typed at a breakpoint, answering a held request without sending it upstream
    /// (HTTP Toolkit's "respond directly", Charles's breakpoint response): the client gets exactly
    /// this status, these header fields (framed by DevProxy: `Content-Length` the body's) and body.
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var headers: [HeaderField]
        public var body: [UInt8]

        public init(status: Int, headers: [HeaderField] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// Whether the answer carries no body on the wire: to HEAD, a 204, a 304 (RFC 9110 §6.4.1).
        public func isBodiless(method: String) -> Bool {
            method.uppercased() == "HEAD" || status == 204 || status == 304
        }

        /// The header fields as sent: the typed ones less those DevProxy frames (`Content-Length`,
        /// `Transfer-Encoding`) and the connection's own (`Connection` and what it names,
        /// `Keep-Alive`, `Proxy-Connection`, `Upgrade`), then `Content-Length` the body's (none
        /// for a 204; a 304's and a HEAD's the typed one, if any, as a GET would get it).
        public func framedHeaders(method: String) -> [HeaderField] {
            let named = headers.filter { $0.name.lowercased() == "connection" }.flatMap { field in
                field.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            }
            let own = Set(named + ["content-length", "transfer-encoding", "connection", "keep-alive",
                                   "proxy-connection", "upgrade", "te", "trailer"])
            var fields = headers.filter { !own.contains($0.name.lowercased()) }
            if status == 204 { return fields }
            if isBodiless(method: method) {
                let typed = headers.last { $0.name.lowercased() == "content-length" }
                return fields + (typed.map { [$0] } ?? [])
            }
            fields.append(HeaderField(name: "Content-Length", value: String(body.count)))
            return fields
        }
    }

    /// What becomes of a held request or response.
    public enum Decision: Sendable, Equatable {
        /// Sent on, with the edit applied (nil: as it came).
        case resume(Edit?)
        /// A held request answered with `Answer` here, never sent upstream.
        case respond(Answer)
        /// Answered 502 here with `reason` (`aborted in the web UI`, `DevProxy stopped`); the flow's
        /// `intercept.outcome` (for a response, `intercept_response.outcome`) is `outcome`.
        case abort(reason: String, outcome: String)
    }

    /// The largest body held, a request's or a response's: one a developer edits in a text box. A
    /// larger one goes on without stopping, and its flow says why (`outcome` `not_held`).
    public static let maxBody = 4 << 20
    /// The most requests held at once; more go on without stopping (their flows say so), so a
    /// filter that matches a flood cannot hold every connection thread.
    public static let maxHeld = 256
    /// The most body bytes breakpoints keep at once, requests' and responses', gathering and held,
    /// across every connection: past it a request or response goes on unheld (its flow says so), so a filter that matches
    /// many large uploads (a hundred HTTP/2 streams of 4 MiB each) cannot grow the proxy's memory
    /// without bound.
    public static let maxBuffered = 64 << 20

    private struct Entry {
        let held: Held
        let decide: @Sendable (Decision) -> Void
    }

    private struct State {
        var text: String?
        var filter: MapRequestFilter?
        var entries: [Entry] = []
        var observers: [Int: @Sendable () -> Void] = [:]
        var nextObserver = 0
        var stopped = false
    }

    private let state: Mutex<State>
    private let active = Atomic<Bool>(false)
    /// The body bytes kept at once (`maxBuffered` unless a test says less).
    public let bodies: ByteBudget

    /// - Parameters:
    ///   - filter: the initial filter (`--intercept`); nil or empty holds nothing.
    ///   - budget: the most body bytes kept at once (`maxBuffered`).
    /// - Throws: `ConfigurationError` when the filter does not parse or asks what neither head tells
    ///   (a body, an error).
    public init(filter: String? = nil, budget: Int = Intercepts.maxBuffered) throws {
        state = Mutex(State())
        bodies = ByteBudget(limit: budget)
        try setFilter(filter)
    }

    /// True when a filter is set: the one check a request pays when none is.
    public var isActive: Bool { active.load(ordering: .relaxed) }

    /// The filter as given; nil when none is set.
    public var filterText: String? { state.withLock { $0.text } }

    /// Sets (or with nil or blank text, clears) the filter. Requests already held stay held.
    /// - Throws: `ConfigurationError` saying what is wrong with `text`; the old filter stays.
    public func setFilter(_ text: String?) throws {
        let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let filter = trimmed.isEmpty ? nil : try MapRequestFilter(parsing: trimmed, option: "--intercept",
                                                                              allowingResponse: true)
        state.withLock { state in
            state.text = filter == nil ? nil : trimmed
            state.filter = filter
        }
        active.store(filter != nil, ordering: .relaxed)
        notify()
    }

    /// Whether `request` (as the map rules left it) is to be held: the filter passes it, asked
    /// before there is a response. Returns the filter's text when it does.
    public func shouldHold(_ request: LocalRequest) -> String? {
        guard isActive else { return nil }
        let (filter, text) = state.withLock { ($0.filter, $0.text) }
        guard let filter, let text, filter.matches(request) else { return nil }
        return text
    }

    /// Whether the response whose head is `status` and `fields` (as the client would get them), to
    /// `request` (as it was sent), is to be held: the filter passes the flow with its response.
    /// Returns the filter's text when it does.
    public func shouldHold(_ request: LocalRequest, status: Int, fields: [(name: String, value: String)]) -> String? {
        guard isActive else { return nil }
        let (filter, text) = state.withLock { ($0.filter, $0.text) }
        guard let filter, let text,
              filter.matches(request, response: MapRequestFilter.ResponseHead(status: status, headers: fields))
        else { return nil }
        return text
    }

    /// Takes `count` bytes of the budget for a body being gathered or held (`ByteBudget.reserve`).
    public func reserve(_ count: Int) -> Bool { bodies.reserve(count) }

    /// Gives back bytes `reserve` took.
    public func release(_ count: Int) { bodies.release(count) }

    /// Request-body bytes breakpoints keep now (gathering and held).
    public var bufferedBytes: Int { bodies.bytes }

    /// Why a request or response goes on unheld when breakpoints keep their budget already.
    public var fullNote: String {
        "not held: breakpoints keep \(bodies.limitText) of bodies already, the most they keep at once"
    }

    /// Whether the board has room for one more held request.
    public var hasRoom: Bool { state.withLock { $0.entries.count < Self.maxHeld && !$0.stopped } }

    /// Whether DevProxy is stopping (`stop`): nothing more is held.
    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Holds `held` until it is decided: `decide` is called once, on the thread that decides (the
    /// web UI's, or `stop`'s), never while a lock is held. After `stop`, it is called at once.
    public func hold(_ held: Held, decide: @escaping @Sendable (Decision) -> Void) {
        let stopped = state.withLock { state -> Bool in
            if state.stopped { return true }
            state.entries.append(Entry(held: held, decide: decide))
            return false
        }
        if stopped {
            decide(Self.stopped(held.phase))
            return
        }
        notify()
    }

    /// Holds `held` and waits for its decision on this thread (an HTTP/1.1 connection's). Every
    /// 250 ms `clientGone` is asked whether the client hung up; when it did, the request (or
    /// response) is withdrawn and nil returned.
    public func wait(_ held: Held, clientGone: () -> Bool) -> Decision? {
        let decided = Mutex<Decision?>(nil)
        let signal = DispatchSemaphore(value: 0)
        hold(held) { decision in
            decided.withLock { $0 = decision }
            signal.signal()
        }
        while signal.wait(timeout: .now() + 0.25) == .timedOut {
            if clientGone(), withdraw(held.id) { return nil }
        }
        return decided.withLock { $0 }
    }

    /// Takes a held request or response off the board without a decision (its client hung up);
    /// true when it was there (false: decided meanwhile).
    @discardableResult
    public func withdraw(_ id: String) -> Bool {
        let removed = state.withLock { state -> Bool in
            guard let index = state.entries.firstIndex(where: { $0.held.id == id }) else { return false }
            state.entries.remove(at: index)
            return true
        }
        if removed { notify() }
        return removed
    }

    /// The held requests and responses, oldest first.
    public var held: [Held] { state.withLock { $0.entries.map(\.held) } }

    /// One held request or response.
    public func held(_ id: String) -> Held? { state.withLock { $0.entries.first { $0.held.id == id }?.held } }

    /// Sends a held request or response on, edited or not; false when none with that id is held
    /// (or, given `phase`, none in that phase: an edit checked against the request is never
    /// applied to the response the same flow was held at since).
    @discardableResult
    public func resume(_ id: String, edit: Edit? = nil, phase: Phase? = nil) -> Bool {
        decide(id, phase: phase) { _ in .resume(edit) }
    }

    /// Answers the held request `id` with `answer`, without sending it upstream; false when no
    /// request with that id is held (a flow whose request went on and whose response is held now
    /// is not answered so: its request was sent).
    @discardableResult
    public func respond(_ id: String, with answer: Answer) -> Bool {
        decide(id, phase: .request) { _ in .respond(answer) }
    }

    /// Answers a held request or response with a 502 saying it was aborted; false when none with
    /// that id (and `phase`, when given) is held.
    @discardableResult
    public func abort(_ id: String, phase: Phase? = nil) -> Bool {
        decide(id, phase: phase) { held in
            .abort(reason: held.phase == .request ? Self.abortedReason : Self.abortedResponseReason, outcome: "aborted")
        }
    }

    /// Sends every held request and response on as it came; returns how many.
    @discardableResult
    public func resumeAll() -> Int {
        let entries = state.withLock { state -> [Entry] in
            defer { state.entries = [] }
            return state.entries
        }
        for entry in entries { entry.decide(.resume(nil)) }
        if !entries.isEmpty { notify() }
        return entries.count
    }

    /// DevProxy is stopping: every held request or response is answered 502 (`stopped`), and any
    /// held later too.
    public func stop() {
        let entries = state.withLock { state -> [Entry] in
            state.stopped = true
            defer { state.entries = [] }
            return state.entries
        }
        for entry in entries { entry.decide(Self.stopped(entry.held.phase)) }
        if !entries.isEmpty { notify() }
    }

    /// Calls `handler` (on whatever thread changed it, no lock held) whenever the filter or the
    /// held requests change; returns a token for `unobserve`.
    public func observe(_ handler: @escaping @Sendable () -> Void) -> Int {
        state.withLock { state in
            state.nextObserver += 1
            state.observers[state.nextObserver] = handler
            return state.nextObserver
        }
    }

    public func unobserve(_ token: Int) {
        _ = state.withLock { $0.observers.removeValue(forKey: token) }
    }

    static let abortedReason = "aborted at a breakpoint in DevProxy's web UI: the request was not sent"
    static let stoppedReason = "DevProxy stopped while the request was held at a breakpoint: it was not sent"
    static let abortedResponseReason = "aborted at a breakpoint in DevProxy's web UI: the origin's response was "
        + "not delivered"
    static let stoppedResponseReason = "DevProxy stopped while the response was held at a breakpoint: it was not "
        + "delivered"

    private static func stopped(_ phase: Phase) -> Decision {
        .abort(reason: phase == .request ? stoppedReason : stoppedResponseReason, outcome: "stopped")
    }

    /// Takes the entry `id` (in `phase`, when given) off the board and decides it as `decision`
    /// says for what it holds, both under one look at the board.
    private func decide(_ id: String, phase: Phase?, _ decision: (Held) -> Decision) -> Bool {
        let entry = state.withLock { state -> Entry? in
            guard let index = state.entries.firstIndex(where: { $0.held.id == id && (phase == nil || $0.held.phase == phase) })
            else { return nil }
            return state.entries.remove(at: index)
        }
        guard let entry else { return false }
        entry.decide(decision(entry.held))
        notify()
        return true
    }

    private func notify() {
        let handlers = state.withLock { Array($0.observers.values) }
        for handler in handlers { handler() }
    }
}

extension Intercepts.Held {
    /// The request as it goes on after `edit`: each part the edit sets, else the client's.
    public func applying(_ edit: Intercepts.Edit?) -> (method: String, url: String, headers: [Intercepts.HeaderField],
                                                        body: [UInt8]) {
        (edit?.method ?? method, edit?.url ?? url, edit?.headers ?? headers, edit?.body ?? body)
    }

    /// The response as it goes to the client after `edit`: each part the edit sets, else the origin's.
    public func applyingToResponse(_ edit: Intercepts.Edit?) -> (status: Int, headers: [Intercepts.HeaderField],
                                                                  body: [UInt8]) {
        (edit?.status ?? status ?? 200, edit?.headers ?? headers, edit?.body ?? body)
    }

    /// The flow's `intercept` record for a request whose client hung up while it was held.
    public func withdrawnRecord(now: Date = Date()) -> Flow.Intercept {
        Flow.Intercept(pausedMs: (now.timeIntervalSince(since) * 10_000).rounded() / 10, outcome: "client_gone",
                       edited: [], filter: filter)
    }

    /// The flow's `intercept` record for `decision`, taken `now`.
    public func record(_ decision: Intercepts.Decision, now: Date = Date()) -> Flow.Intercept {
        let pausedMs = (now.timeIntervalSince(since) * 10_000).rounded() / 10
        switch decision {
        case .abort(_, let outcome):
            return Flow.Intercept(pausedMs: pausedMs, outcome: outcome, edited: [], filter: filter)
        case .respond(let answer):
            var record = Flow.Intercept(pausedMs: pausedMs, outcome: "answered", edited: [], filter: filter)
            record.answeredStatus = answer.status
            return record
        case .resume(let edit) where phase == .response:
            var edited: [String] = []
            if let changed = edit?.status, changed != status { edited.append("status") }
            if let changed = edit?.headers, changed != headers { edited.append("headers") }
            if let changed = edit?.body, changed != body { edited.append("body") }
            return Flow.Intercept(pausedMs: pausedMs, outcome: "resumed", edited: edited, filter: filter,
                                  originalStatus: edited.contains("status") ? status : nil)
        case .resume(let edit):
            var edited: [String] = []
            if let changed = edit?.method, changed != method { edited.append("method") }
            if let changed = edit?.url, changed != url { edited.append("url") }
            if let changed = edit?.headers, changed != headers { edited.append("headers") }
            if let changed = edit?.body, changed != body { edited.append("body") }
            return Flow.Intercept(pausedMs: pausedMs, outcome: "resumed", edited: edited, filter: filter,
                                  originalMethod: edited.contains("method") ? method : nil,
                                  originalURL: edited.contains("url") ? url : nil)
        }
    }
}

extension Intercepts {
    /// The flow's `intercept` record for a request the filter passed that went on at once.
    public static func notHeld(filter: String, because note: String) -> Flow.Intercept {
        Flow.Intercept(pausedMs: 0, outcome: "not_held", edited: [], filter: filter, note: note)
    }

    /// Why a request or response the filter passed goes on at once, or nil when it may be held:
    /// its body (by its length so far, or its `Content-Length`) is over `maxBody`, or the board is full.
    public static func refusal(bodyBytes: Int, board: Intercepts) -> String? {
        if bodyBytes > maxBody {
            return "not held: its body is over \(maxBody >> 20) MiB, more than a breakpoint holds"
        }
        if board.isStopped { return "not held: DevProxy is stopping" }
        if !board.hasRoom {
            return "not held: \(maxHeld) requests and responses are held already, the most breakpoints hold"
        }
        return nil
    }
}
