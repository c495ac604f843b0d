import Foundation
import HTTP2

/// An HTTP/2 connection to the origin, owned by one client connection: its TLS stream, its
/// client-role session, and which client stream each of its streams carries.
final class HTTP2UpstreamLeg {
    let upstream: UpstreamConnection
    let session: HTTP2Session
    /// Upstream stream id → client stream id.
    var clientStreams: [Int32: Int32] = [:]
    /// The origin sent GOAWAY: no new stream goes here; those above `lastStreamID` were refused.
    var goneAway = false
    /// The connection failed or closed; its streams were ended.
    var closed = false

    init(upstream: UpstreamConnection, limits: HTTP2Limits) throws {
        self.upstream = upstream
        self.session = try HTTP2Session(role: .client, limits: limits)
    }

    /// Whether a new request may open a stream here.
    var acceptsStreams: Bool { !goneAway && !closed && session.wantsRead }

    /// Writes what the session has to send; returns the events sending caused (data handed to
    /// the wire, streams closed).
    func flush() throws -> [HTTP2Event] {
        try session.flush(to: upstream.stream)
    }
}
