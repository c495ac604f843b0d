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
    /// An error GOAWAY's code and debug text, named when the origin then closes the connection
    /// under streams still open (the flows' `error.code`, and `goAwayError` in their message).
    var goAwayFault: (code: HTTP2ErrorCode, debug: String)?
    /// `GOAWAY INTERNAL_ERROR: boom`, from `goAwayFault`.
    var goAwayError: String? {
        goAwayFault.map { "GOAWAY \($0.code)" + ($0.debug.isEmpty ? "" : ": \($0.debug)") }
    }
    /// The connection failed or closed; its streams were ended.
    var closed = false
    /// The origin's SETTINGS enabled extended CONNECT (RFC 8441): a WebSocket may open a stream here.
    var takesExtendedConnect = false
    /// Bytes read from the origin so far.
    var received = 0
    /// The origin's first bytes were not an HTTP/2 SETTINGS frame (an HTTP/1.1 answer to the
    /// preface): it does not speak h2 by prior knowledge.
    var answeredOtherThanHTTP2 = false
    /// A stream's receive window once its client has shown it reads (`widenWindow`).
    let fullStreamWindow: UInt32
    /// Streams whose window is `fullStreamWindow`.
    private var widened = Set<Int32>()

    /// A new stream's receive window until then: 64 KiB. What the origin sends beyond what the
    /// client takes waits in the proxy, up to this window per stream: a client that grants no
    /// window to 100 streams (bench/run's h2stall) held 100 × 256 KiB here, and holds 100 × 64 KiB.
    static let startingStreamWindow: UInt32 = 65_536

    init(upstream: UpstreamConnection, limits: HTTP2Limits) throws {
        self.upstream = upstream
        fullStreamWindow = limits.initialWindowSize
        var starting = limits
        starting.initialWindowSize = min(limits.initialWindowSize, Self.startingStreamWindow)
        self.session = try HTTP2Session(role: .client, limits: starting)
    }

    /// Raises `stream`'s receive window to `fullStreamWindow`, once: its client took every byte
    /// relayed so far, so a larger window speeds the stream up instead of filling the proxy.
    func widenWindow(of stream: Int32) {
        guard fullStreamWindow > Self.startingStreamWindow, clientStreams[stream] != nil,
              widened.insert(stream).inserted else { return }
        try? session.setReceiveWindow(stream: stream, size: fullStreamWindow)
    }

    /// Raises `stream`'s receive window to `size` (a response gathered whole at a breakpoint),
    /// which `widenWindow` then leaves as it is.
    func openWindow(of stream: Int32, to size: UInt32) {
        guard clientStreams[stream] != nil else { return }
        widened.insert(stream)
        try? session.setReceiveWindow(stream: stream, size: size)
    }

    /// Sets `stream`'s receive window back to `fullStreamWindow` after `openWindow`: what the
    /// origin sends from now on waits for the client, as any stream's does.
    func narrowWindow(of stream: Int32) {
        guard clientStreams[stream] != nil else { return }
        try? session.setReceiveWindow(stream: stream, size: fullStreamWindow)
    }

    /// Streams that have closed here: a connection that served one before is a reused one.
    private(set) var streamsClosed = 0

    /// Forgets a closed stream.
    func streamClosed(_ stream: Int32) {
        streamsClosed += 1
        clientStreams[stream] = nil
        widened.remove(stream)
    }

    /// Whether a new request may open a stream here.
    var acceptsStreams: Bool { !goneAway && !closed && session.wantsRead }

    /// Writes what the session has to send; returns the events sending caused (data handed to
    /// the wire, streams closed).
    func flush() throws -> [HTTP2Event] {
        try session.flush(to: upstream.stream)
    }
}
