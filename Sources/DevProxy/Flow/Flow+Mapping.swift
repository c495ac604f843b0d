extension Flow {
    /// What a map rule did to a request (`--map-remote`, `--map-local`): the flow log's `mapped`,
    /// HAR's `_mapped`. The flow's own URL is the one the request went to (mitmproxy's view);
    /// `from` keeps the one the client asked for.
    public struct Mapping: Codable, Sendable, Equatable {
        /// `map-remote` (sent to another URL) or `map-local` (answered from a local file).
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

        public init(rule: String, from: String, to: String, by: [String], missing: [String]? = nil) {
            self.rule = rule
            self.from = from
            self.to = to
            self.by = by
            self.missing = missing
        }
    }
}

extension Flow.Mapping: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.field("by", by) { writer, values in writer.array(values) { $0.string($1) } }
            f.string("from", from)
            f.field("missing", missing) { writer, values in writer.array(values) { $0.string($1) } }
            f.string("rule", rule)
            f.string("to", to)
        }
    }
}
