import Foundation

/// `--map-remote` and `--map-local`, in mitmproxy's syntax so its options paste as they are: the
/// first character is the separator, then an optional FLOW-FILTER, a URL regex and the target
/// (`|~d api.example.com|https://api.example.com|http://localhost:3000`, `|example.com/static|./static`).
///
/// Every request is put to the rules before anything answers it, HTTP/1.1 and HTTP/2 alike: the
/// map-remote rules in order, each rewriting the URL as the ones before left it (`MapRemoteRule`),
/// then the map-local rules on that URL, the first whose file exists answering it
/// (`MapLocalRule`), as mitmproxy runs its MapRemote add-on before MapLocal. Without rules the
/// engine pays one empty-array check a request.
public struct MapRules: Sendable {
    public var remote: [MapRemoteRule] = []
    public var local: [MapLocalRule] = []
    /// `--modify-headers`, applied after the map rules to a request no map-local rule answered.
    public var headers: [ModifyHeadersRule] = []
    /// `--block-list`, asked before every other rule (mitmproxy's BlockList add-on runs first).
    public var block: [BlockListRule] = []
    /// `--modify-body`, applied to the response bodies their filters pass (`ModifyBodyRule`).
    public var body: [ModifyBodyRule] = []

    public init() {}

    /// Parses the options' values (`--map-remote`, `--map-local`), in the order given.
    /// - Parameter directory: what a relative LOCAL-PATH is read against (the working directory).
    /// - Throws: `ConfigurationError` naming the option and what is wrong with it.
    /// - Parameter redact: `--redact`'s names, masked in what the flow records of `--modify-headers`.
    public init(remote: [String], local: [String], headers: [String] = [], block: [String] = [],
                body: [String] = [], redact: [String] = [],
                directory: String = FileManager.default.currentDirectoryPath) throws {
        self.block = try block.map { try BlockListRule(parsing: $0) }
        self.remote = try remote.map { try MapRemoteRule(parsing: $0) }
        self.local = try local.map { try MapLocalRule(parsing: $0, directory: directory) }
        self.headers = try headers.map { try ModifyHeadersRule(parsing: $0, redact: redact, directory: directory) }
        self.body = try body.map { try ModifyBodyRule(parsing: $0, directory: directory) }
    }

    /// Whether there is no rule at all (the engine's only cost then).
    public var isEmpty: Bool { remote.isEmpty && local.isEmpty && headers.isEmpty && block.isEmpty && body.isEmpty }

    /// What the rules make of `request` (its URL absolute, as the flow shows it): nil when none
    /// applied.
    func apply(to request: LocalRequest) -> MapOutcome? {
        if let rule = block.first(where: { $0.filter.matches(request) }) {
            let record = Flow.Mapping(rule: "block-list", from: request.url, to: request.url, by: [rule.option])
            return MapOutcome(record: record, destination: nil,
                              route: MapOutcome.route(rule.response, name: "--block-list"))
        }
        var current = request
        var by: [String] = []
        for rule in remote where rule.filter?.matches(current) ?? true {
            guard let url = rule.rewrite(current.url), url != current.url else { continue }
            current.url = url
            by.append(rule.option)
        }
        var missing: [String] = []
        var missedBy: [String] = []
        for rule in local where rule.filter?.matches(current) ?? true {
            guard let answer = rule.answer(for: current.url) else { continue }
            // The first rule with an existing file answers; a miss lets the later rules try, and
            // only when none has its file is the answer a 404 naming every file looked for (mitmproxy).
            guard let files = answer.missing else {
                let record = Flow.Mapping(rule: rule.inline == nil ? "map-local" : "mock", from: request.url,
                                          to: answer.file, by: by + [rule.option])
                return MapOutcome(record: record, destination: nil, route: answer.route)
            }
            missing += files
            missedBy.append(rule.option)
        }
        if let first = missing.first {
            let record = Flow.Mapping(rule: "map-local", from: request.url, to: first, by: by + missedBy,
                                      missing: missing)
            return MapOutcome.missing(record)
        }
        let (edits, changes) = headerEdits(for: current)
        guard !by.isEmpty else {
            guard let changes else { return nil }
            let record = Flow.Mapping(rule: "modify-headers", from: request.url, to: current.url, by: [],
                                      headers: changes)
            return MapOutcome(record: record, destination: nil, route: nil, edits: edits)
        }
        let record = Flow.Mapping(rule: "map-remote", from: request.url, to: current.url, by: by, headers: changes)
        guard let destination = MapRemoteRule.destination(of: current.url) else {
            let reason = "--map-remote \(by.last ?? "") made \(current.url), which is not an http:// or https:// URL "
                + "with a host"
            return MapOutcome(record: record, destination: nil,
                              route: MapOutcome.route(.refusal(status: 502, kind: .ruleFailed, reason)))
        }
        return MapOutcome(record: record, destination: destination, route: nil, edits: edits)
    }

    /// What `--modify-headers` does to `request`, as mitmproxy's modify_headers does it: every
    /// rule's filter asked first, then every matching rule's header removed, then the values added.
    private func headerEdits(for request: LocalRequest) -> (HeaderEdits?, [Flow.HeaderChange]?) {
        guard !headers.isEmpty else { return (nil, nil) }
        let matching = headers.filter { $0.filter?.matches(request) ?? true }
        guard !matching.isEmpty, let (edits, changes) = HeaderEdits.of(matching, on: request.headers) else {
            return (nil, nil)
        }
        return (edits, changes)
    }

    /// Splits a rule into its filter (nil when left out), its regex and its target, as mitmproxy
    /// does: the first character separates, and the last part keeps any further separator.
    /// - Throws: `ConfigurationError` for fewer than two parts or an empty one.
    static func parts(of option: String, name: String, target: String) throws -> (filter: String?, regex: String,
                                                                                  target: String) {
        let usage = "give \(name) |FLOW-FILTER|URL-REGEX|\(target) or |URL-REGEX|\(target) (the first character "
            + "is the separator)"
        let parts = try split(option, name: name, usage: usage)
        guard !parts.first.isEmpty, !parts.last.isEmpty else {
            throw ConfigurationError("\(name) \(option) is not a rule: \(usage)")
        }
        return (parts.filter, parts.first, parts.last)
    }

    /// Splits `|FLOW-FILTER|A|B` or `|A|B` at its first character, as mitmproxy's rule options
    /// do: the filter is nil when left out, and B keeps any further separator. Empty parts are the
    /// caller's to refuse.
    /// - Throws: `ConfigurationError` for an empty option or one of fewer than two parts.
    static func split(_ option: String, name: String, usage: String) throws -> (filter: String?, first: String,
                                                                               last: String) {
        guard let separator = option.first else { throw ConfigurationError("\(name) is empty; \(usage)") }
        let parts = option.dropFirst().split(separator: separator, maxSplits: 2, omittingEmptySubsequences: false)
            .map(String.init)
        switch parts.count {
        case 2: return (nil, parts[0], parts[1])
        case 3: return (parts[0].isEmpty ? nil : parts[0], parts[1], parts[2])
        default: throw ConfigurationError("\(name) \(option) is not a rule: \(usage)")
        }
    }

    /// `pattern` compiled as mitmproxy's Python regexes read (case-sensitive; `(?P<name>…)` named
    /// groups become ICU's `(?<name>…)`).
    static func regex(_ pattern: String, option: String) throws -> NSRegularExpression {
        let icu = pattern.replacingOccurrences(of: "(?P<", with: "(?<")
        do {
            return try NSRegularExpression(pattern: icu)
        } catch {
            throw ConfigurationError("\(option): \(pattern) is not a valid regular expression")
        }
    }
}

/// What the map rules did to one request: the flow's record, and either where it now goes
/// (`destination`) or what answers it here (`route`).
struct MapOutcome {
    var record: Flow.Mapping
    var destination: Destination?
    var route: LocalRoute?
    /// The request's headers as `--modify-headers` changes them; nil: as they came.
    var edits: HeaderEdits? = nil

    /// The local route that sends `response`, whatever the request's body (read up to 64 MiB, as
    /// any local route reads it, then dropped).
    static func route(_ response: LocalResponse, name: String = "--map-local") -> LocalRoute {
        LocalRoute(name: name, bodyLimit: 64 << 20, matches: { _ in true }, respond: { _ in response })
    }

    /// A 404 for a map-local miss, its body naming every file looked for.
    static func missing(_ record: Flow.Mapping) -> MapOutcome {
        let files = record.missing ?? [record.to]
        let message = "--map-local found none of the files this request maps to: " + files.joined(separator: ", ")
        let headers = [("Content-Type", ErrorResponse.textPlain),
                       ("X-DevProxy", "answered by DevProxy (--map-local): no such file")]
        let response = LocalResponse(status: 404, headers: headers, body: ErrorResponse.body(status: 404, detail: message))
        return MapOutcome(record: record, destination: nil, route: route(response))
    }
}
