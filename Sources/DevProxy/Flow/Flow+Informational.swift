import Foundation
import HTTPTypes

extension Flow {
    /// An informational (1xx) response the origin sent before its final one: 103 Early Hints
    /// (RFC 8297), 102 Processing, or any other 1xx but `100 Continue` and `101`. Relayed to
    /// the client as it came (never to an HTTP/1.0 client, RFC 9110 §15.2).
    public struct InformationalResponse: Codable, Sendable, Equatable {
        public var status: Int
        /// The reason phrase an HTTP/1.1 origin sent; nil over HTTP/2, which has none.
        public var reason: String?
        /// Ordered `[name, value]` pairs as received, redacted names masked.
        public var headers: FieldPairs
        /// When it arrived: RFC 3339 with milliseconds, UTC (as `started`).
        public var time: String

        public init(status: Int, reason: String?, headers: FieldPairs, time: String) {
            (self.status, self.reason, self.headers, self.time) = (status, reason, headers, time)
        }
    }
}

extension Flow.InformationalResponse: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.field("headers", headers) { FlowJSONWriter.writeHeaders(&$0, $1) }
            f.string("reason", reason)
            f.int("status", status)
            f.string("time", time)
        }
    }
}

extension Flow.BodyCut: FlowJSONWritable {
    func write(to writer: inout FlowJSONWriter) {
        writer.object { f in
            f.string("reason", reason)
            f.int("sent", sent)
        }
    }
}
