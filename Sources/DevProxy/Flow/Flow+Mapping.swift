extension Flow {
    /// What a map rule did to a request (`--map-remote`, `--map-local`): the flow log's `mapped`,
    /// HAR's `_mapped`. The flow's own URL is the one the request went to (mitmproxy's view);
    /// `from` keeps the one the client asked for.
    public struct Mapping: Codable, Sendable, Equatable {
        /// `map-remote` (sent to another URL), `map-local` (answered from a local file), `mock`
        /// (answered by a mock rule made in the web UI's Rules view: `to` is `mock STATUS TYPE`) or
        /// `modify-headers` (only headers changed, the request's or the response's: `from` and
        /// `to` are the same URL) or `modify-body` (only a body changed, or a rule matched and
        /// `note` says why the body was left as it came).
        public var rule: String
        /// The URL the client asked for.
        public var from: String
        /// Where the request went: the URL (`map-remote`), or the file that answered it
        /// (`map-local`; the first one looked for when none exists).
        public var to: String
        /// The options that applied, in order, as they were given (`|~d api|https://api|http://localhost:3000`).
        public var by: [String]
        /// `map-local` found none of these files, and answered 404.
        public var missing: [String]?
        /// The headers `--modify-headers` set or removed, in the order of its options: the
        /// request's, then the response's (`HeaderChange.on`).
        public var headers: [HeaderChange]?
        /// What `--modify-body` did to the bodies, in the order of its options.
        public var body: [BodyChange]?
        /// Why `--modify-body` left a body its rule matched as it came (over the limit, an event
        /// stream, an unknown coding, …), or how it was sent differently (without a br coding).
        public var note: String?

        public init(rule: String, from: String, to: String, by: [String], missing: [String]? = nil,
                    headers: [HeaderChange]? = nil, body: [BodyChange]? = nil, note: String? = nil) {
            self.rule = rule
            self.from = from
            self.to = to
            self.by = by
            self.missing = missing
            self.headers = headers
            self.body = body
            self.note = note
        }
    }

    /// One header `--modify-headers` changed: `set` (removed, then added with the rule's value)
    /// or `removed`; `by` the option (an inline value `--redact` names masked); `on` is
    /// `response` for a change to the response's head, absent for one to the request.
    public struct HeaderChange: Codable, Sendable, Equatable {
        public var name: String
        public var action: String
        public var by: String
        public var on: String?

        public init(name: String, action: String, by: String, on: String? = nil) {
            self.name = name
            self.action = action
            self.by = by
            self.on = on
        }

        /// Whether the change was made to the response (`on` is `response`).
        public var isOnResponse: Bool { on == "response" }
    }

    /// What one `--modify-body` rule did to a body: `on` `request` or `response`, `by` the
    /// option, `replacements` how many matches were replaced (0: it matched the flow, not the body).
    public struct BodyChange: Codable, Sendable, Equatable {
        public var on: String
        public var by: String
        public var replacements: Int

        public init(on: String, by: String, replacements: Int) {
            self.on = on
            self.by = by
            self.replacements = replacements
        }
    }
}

extension Flow.Mapping: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.field("body", body) { writer, changes in
                writer.array(changes) { writer, change in
                    writer.object { f in
                        f.string("by", change.by)
                        f.string("on", change.on)
                        f.int("replacements", change.replacements)
                    }
                }
            }
            f.field("by", by) { writer, values in writer.array(values) { $0.string($1) } }
            f.string("from", from)
            f.field("headers", headers) { writer, changes in
                writer.array(changes) { writer, change in
                    writer.object { f in
                        f.string("action", change.action)
                        f.string("by", change.by)
                        f.string("name", change.name)
                        f.string("on", change.on)
                    }
                }
            }
            f.field("missing", missing) { writer, values in writer.array(values) { $0.string($1) } }
            f.string("note", note)
            f.string("rule", rule)
            f.string("to", to)
        }
    }
}
