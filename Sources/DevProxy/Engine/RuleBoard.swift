import Foundation
import Synchronization

/// The map rules while the proxy runs: what `--map-remote`, `--map-local`, `--block-list`,
/// `--modify-headers`, `--modify-body` and `--config` gave at start, then what the web UI's Rules
/// view adds, switches off or on, edits, moves or deletes, as Charles's and Proxyman's Map Local,
/// Map Remote and Block List windows change a running session. A rule is written in its option's
/// syntax and parsed by the option's parser, so a bad one is refused with the same reason. A mock
/// is a map-local rule whose answer (status, content type, body) is typed in, or taken from a
/// recorded flow (its body's exact bytes), rather than read from a file. A change applies to the
/// next request on every connection, open or not; observers (the console, the web UI's live
/// stream) are told of each.
///
/// One per proxy, shared by every connection thread and the web UI. `rules` is what the engine
/// reads (`ProxyConfiguration.mapRules`): with no rule switched on it is one atomic load and an
/// empty `MapRules`, so a proxy without rules pays nothing it did not pay before.
public final class RuleBoard: Sendable {
    /// The option a rule is written for.
    public enum Kind: String, Sendable, CaseIterable {
        case mapRemote = "map-remote"
        case mapLocal = "map-local"
        case mock
        case blockList = "block-list"
        case modifyHeaders = "modify-headers"
        case modifyBody = "modify-body"
    }

    /// Where a rule came from: the command line, the `--config` file, or the web UI.
    public enum Origin: String, Sendable {
        case flag, config, web
    }

    /// A mock's answer: as typed, or a recorded response's bytes (an image, a protobuf) sent as they are.
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var contentType: String
        /// The body sent, byte for byte.
        public var bytes: [UInt8]

        /// The body as text (UTF-8; a byte that is not, as U+FFFD); setting it sends its UTF-8.
        public var body: String {
            get { String(decoding: bytes, as: UTF8.self) }
            set { bytes = Array(newValue.utf8) }
        }

        /// The body as text when it is UTF-8, or nil for bytes that are not (sent and shown as base64).
        public var text: String? { String(validating: bytes, as: UTF8.self) }

        public init(status: Int = 200, contentType: String = "application/json", body: String = "") {
            self.init(status: status, contentType: contentType, bytes: Array(body.utf8))
        }

        public init(status: Int = 200, contentType: String = "application/json", bytes: [UInt8]) {
            self.status = status
            self.contentType = contentType
            self.bytes = bytes
        }

        /// The largest body a mock holds (it is kept in memory and sent whole).
        public static let bodyLimit = 1 << 20
    }

    /// One rule on the board.
    public struct Rule: Sendable {
        public let id: Int
        public let kind: Kind
        /// The rule as typed (`|~d api|https://a/|https://b/`).
        public let text: String
        public var enabled: Bool
        public let origin: Origin
        /// A mock's answer; nil for every other kind.
        public let answer: Answer?
        fileprivate let parsed: Parsed
    }

    /// What changed, for the run's console line and the web UI's pages.
    public enum Change: Sendable, CustomStringConvertible {
        case added(Rule), removed(Rule), switched(Rule), edited(Rule), moved(Rule)

        /// `rule added (web UI): map-local |…|…`.
        public var description: String {
            switch self {
            case .added(let rule): "rule added (web UI): \(rule.kind.rawValue) \(rule.text)"
            case .removed(let rule): "rule deleted (web UI): \(rule.kind.rawValue) \(rule.text)"
            case .switched(let rule):
                "rule \(rule.enabled ? "on" : "off") (web UI): \(rule.kind.rawValue) \(rule.text)"
            case .edited(let rule): "rule edited (web UI): \(rule.kind.rawValue) \(rule.text)"
            case .moved(let rule): "rule moved (web UI): \(rule.kind.rawValue) \(rule.text)"
            }
        }
    }

    fileprivate enum Parsed: Sendable {
        case remote(MapRemoteRule), local(MapLocalRule), block(BlockListRule), headers(ModifyHeadersRule)
        case body(ModifyBodyRule)
    }

    private struct State {
        var rules: [Rule] = []
        var nextID = 1
    }

    private let state = Mutex(State())
    /// The rules switched on, as the engine applies them.
    private let current = Mutex(MapRules())
    /// How many rules are switched on: zero lets `rules` skip the lock.
    private let switchedOn = Atomic<Int>(0)
    private let observers = Mutex<(next: Int, list: [(id: Int, call: @Sendable (Change) -> Void)])>((1, []))
    private let redact: [String]
    private let directory: String

    /// A board holding `start`'s rules, switched on, in the order given.
    /// - Parameters:
    ///   - start: each rule's kind, text and origin (the flags', then the config file's).
    ///   - redact: `--redact`'s names, masked in what a `--modify-headers` rule records.
    ///   - directory: what a relative LOCAL-PATH or `@FILE` added in the web UI is read against.
    /// - Throws: `ConfigurationError` for a rule that does not parse.
    public init(start: [(kind: Kind, text: String, origin: Origin)], redact: [String] = [],
                directory: String = FileManager.default.currentDirectoryPath) throws {
        self.redact = redact
        self.directory = directory
        var state = State()
        for rule in start {
            let parsed = try Self.parse(rule.kind, rule.text, answer: nil, redact: redact, directory: directory)
            state.rules.append(Rule(id: state.nextID, kind: rule.kind, text: rule.text, enabled: true,
                                    origin: rule.origin, answer: nil, parsed: parsed))
            state.nextID += 1
        }
        self.state.withLock { $0 = state }
        publish(state.rules)
    }

    /// The rules switched on, for the engine: an empty `MapRules` without a lock when none is.
    public var rules: MapRules {
        guard switchedOn.load(ordering: .acquiring) > 0 else { return MapRules() }
        return current.withLock { $0 }
    }

    /// Every rule, in order.
    public var list: [Rule] { state.withLock { $0.rules } }

    /// Adds a rule at the end, switched on.
    /// - Throws: `ConfigurationError` with the option parser's reason.
    @discardableResult
    public func add(_ kind: Kind, text: String, answer: Answer? = nil) throws -> Rule {
        let parsed = try Self.parse(kind, text, answer: answer, redact: redact, directory: directory)
        let rule = change { state in
            let rule = Rule(id: state.nextID, kind: kind, text: text, enabled: true, origin: .web,
                            answer: kind == .mock ? answer ?? Answer() : nil, parsed: parsed)
            state.nextID += 1
            state.rules.append(rule)
            return rule
        }
        notify(.added(rule))
        return rule
    }

    /// Switches rule `id` on or off; nil when there is no such rule.
    @discardableResult
    public func set(_ id: Int, enabled: Bool) -> Rule? {
        let rule = change { state -> Rule? in
            guard let index = state.rules.firstIndex(where: { $0.id == id }) else { return nil }
            guard state.rules[index].enabled != enabled else { return nil }
            state.rules[index].enabled = enabled
            return state.rules[index]
        }
        if let rule { notify(.switched(rule)) }
        return rule ?? list.first { $0.id == id }
    }

    /// Rewrites rule `id` (one the web UI added), keeping its place and its switch.
    /// - Returns: the rule, or nil when there is no such rule.
    /// - Throws: `ConfigurationError` with the parser's reason, or for a rule from the flags or the file.
    public func edit(_ id: Int, text: String, answer: Answer?) throws -> Rule? {
        guard let old = list.first(where: { $0.id == id }) else { return nil }
        guard old.origin == .web else { throw Self.fixed(old) }
        let parsed = try Self.parse(old.kind, text, answer: answer ?? old.answer, redact: redact, directory: directory)
        let rule = change { state -> Rule? in
            guard let index = state.rules.firstIndex(where: { $0.id == id }) else { return nil }
            let rule = Rule(id: id, kind: old.kind, text: text, enabled: state.rules[index].enabled, origin: .web,
                            answer: old.kind == .mock ? answer ?? old.answer : nil, parsed: parsed)
            state.rules[index] = rule
            return rule
        }
        if let rule { notify(.edited(rule)) }
        return rule
    }

    /// Moves rule `id` to `position` (0 first; past the end: last). Rules of one kind apply in
    /// the board's order.
    @discardableResult
    public func move(_ id: Int, to position: Int) -> Rule? {
        let rule = change { state -> Rule? in
            guard let index = state.rules.firstIndex(where: { $0.id == id }) else { return nil }
            let rule = state.rules.remove(at: index)
            state.rules.insert(rule, at: min(max(position, 0), state.rules.count))
            return rule
        }
        if let rule { notify(.moved(rule)) }
        return rule
    }

    /// Deletes rule `id` (one the web UI added).
    /// - Returns: the rule deleted, or nil when there is no such rule.
    /// - Throws: `ConfigurationError` for a rule from the flags or the file (switch it off instead).
    public func remove(_ id: Int) throws -> Rule? {
        guard let old = list.first(where: { $0.id == id }) else { return nil }
        guard old.origin == .web else { throw Self.fixed(old) }
        let rule = change { state -> Rule? in
            guard let index = state.rules.firstIndex(where: { $0.id == id }) else { return nil }
            return state.rules.remove(at: index)
        }
        if let rule { notify(.removed(rule)) }
        return rule
    }

    /// Calls `observer` after each change, on the thread that made it (no lock of the board held).
    /// - Returns: what `unobserve` takes to stop the calls.
    @discardableResult
    public func observe(_ observer: @escaping @Sendable (Change) -> Void) -> Int {
        observers.withLock { observers in
            defer { observers.next += 1 }
            observers.list.append((observers.next, observer))
            return observers.next
        }
    }

    /// Stops the calls of the observer `observe` returned `id` for.
    public func unobserve(_ id: Int) {
        observers.withLock { $0.list.removeAll { $0.id == id } }
    }

    /// Runs `body` on the rules and publishes what it leaves, in one lock so changes keep their order.
    private func change<T>(_ body: (inout State) -> T) -> T {
        state.withLock { state in
            let result = body(&state)
            publish(state.rules)
            return result
        }
    }

    /// Makes the engine's `MapRules` from the rules switched on.
    private func publish(_ rules: [Rule]) {
        var map = MapRules()
        for rule in rules where rule.enabled {
            switch rule.parsed {
            case .remote(let parsed): map.remote.append(parsed)
            case .local(let parsed): map.local.append(parsed)
            case .block(let parsed): map.block.append(parsed)
            case .headers(let parsed): map.headers.append(parsed)
            case .body(let parsed): map.body.append(parsed)
            }
        }
        current.withLock { $0 = map }
        switchedOn.store(rules.count { $0.enabled }, ordering: .releasing)
    }

    private func notify(_ change: Change) {
        for observer in observers.withLock({ $0.list }) { observer.call(change) }
    }

    private static func fixed(_ rule: Rule) -> ConfigurationError {
        let source = rule.origin == .flag ? "--\(rule.kind.rawValue) on the command line" : "the --config file"
        return ConfigurationError("rule \(rule.id) came from \(source): it can be switched off, not edited or deleted")
    }

    /// `text` parsed by its option's parser.
    private static func parse(_ kind: Kind, _ text: String, answer: Answer?, redact: [String],
                              directory: String) throws -> Parsed {
        switch kind {
        case .mapRemote: return .remote(try MapRemoteRule(parsing: text))
        case .mapLocal: return .local(try MapLocalRule(parsing: text, directory: directory))
        case .blockList: return .block(try BlockListRule(parsing: text))
        case .modifyHeaders: return .headers(try ModifyHeadersRule(parsing: text, redact: redact, directory: directory))
        case .modifyBody: return .body(try ModifyBodyRule(parsing: text, directory: directory))
        case .mock:
            let answer = answer ?? Answer()
            guard (200...599).contains(answer.status) else {
                throw ConfigurationError("mock \(text): \(answer.status) is not a status to answer with (200 to 599)")
            }
            guard answer.bytes.count <= Answer.bodyLimit else {
                throw ConfigurationError("mock \(text): the body is over \(Answer.bodyLimit >> 20) MiB")
            }
            let type = answer.contentType.trimmingCharacters(in: .whitespaces)
            guard !type.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw ConfigurationError("mock \(text): the content type must be one line")
            }
            var headers: [(name: String, value: String)] = type.isEmpty ? [] : [("Content-Type", type)]
            headers.append(("X-DevProxy", "answered by DevProxy (mock rule)"))
            let response = LocalResponse(status: answer.status, headers: headers, body: answer.bytes)
            let shown = "mock \(answer.status)" + (type.isEmpty ? "" : " \(type)")
            return .local(try MapLocalRule(mock: text, response: response, path: shown))
        }
    }
}
