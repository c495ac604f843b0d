extension Flow {
    /// A request held at a breakpoint (`devproxy run --intercept FILTER`, the web UI's Intercept
    /// box; `Intercepts`): the flow log's `intercept`, HAR's `_intercept`. The flow's request is
    /// the one that went on, as edited; `original_method` and `original_url` keep what the
    /// client sent when those were changed, and `edited` names every part that was. A held
    /// response has one of its own: `intercept_response`, HAR's `_interceptResponse`, whose
    /// `edited` names `status`, `headers`, `body`, and `original_status` the origin's status. A
    /// request answered at its breakpoint (`answered`) was never sent: `answered_status` is the
    /// status typed there, and the flow's response the answer the client got.
    public struct Intercept: Codable, Sendable, Equatable {
        /// How long the request waited at the breakpoint, in milliseconds.
        public var pausedMs: Double
        /// `resumed` (sent on, edited or not), `aborted` (answered 502 from the web UI or the
        /// API), `answered` (a held request answered with a response typed there, not sent
        /// upstream), `client_gone` (the client hung up while it waited), `stopped` (DevProxy stopped
        /// while it waited) or `not_held` (the filter passed it but it went on at once: `note`
        /// says why).
        public var outcome: String
        /// Why a request the filter passed was not held (`not_held`).
        public var note: String?
        /// The parts changed before it went on, in this order: a request's `method`, `url`,
        /// `headers`, `body`, a response's `status`, `headers`, `body`; empty when it went on as it came.
        public var edited: [String]
        /// The filter that held it (`~d api.acme.dev & ~m POST`).
        public var filter: String
        /// What the client sent, when an edit changed it.
        public var originalMethod: String?
        public var originalURL: String?
        /// A held response's status as the origin sent it, when an edit changed it.
        public var originalStatus: Int?
        /// The status of the response typed at the breakpoint (`answered`).
        public var answeredStatus: Int?

        enum CodingKeys: String, CodingKey {
            case pausedMs = "paused_ms", outcome, edited, filter
            case originalMethod = "original_method", originalURL = "original_url", note
            case originalStatus = "original_status"
            case answeredStatus = "answered_status"
        }

        public init(pausedMs: Double, outcome: String, edited: [String], filter: String,
                    originalMethod: String? = nil, originalURL: String? = nil, note: String? = nil,
                    originalStatus: Int? = nil) {
            self.originalStatus = originalStatus
            self.pausedMs = pausedMs
            self.outcome = outcome
            self.edited = edited
            self.filter = filter
            self.originalMethod = originalMethod
            self.originalURL = originalURL
            self.note = note
        }
    }
}

extension Flow.Intercept: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.int("answered_status", answeredStatus)
            f.field("edited", edited) { writer, values in writer.array(values) { $0.string($1) } }
            f.string("filter", filter)
            f.string("note", note)
            f.string("original_method", originalMethod)
            f.int("original_status", originalStatus)
            f.string("original_url", originalURL)
            f.string("outcome", outcome)
            f.double("paused_ms", pausedMs)
        }
    }
}
