import Testing
@testable import HTTP2

/// Received DATA is acknowledged only by `consume`, so a sender stalls at the receiver's window
/// and a relay holds no more than that window; `.dataSent` and `.dataDiscarded` report what left
/// or was dropped from an outbound queue, so the relay can credit the source.
@Suite struct HTTP2FlowControlTests {
    private static let window = 65_536

    private static func limits() -> HTTP2Limits {
        var limits = HTTP2Limits()
        limits.initialWindowSize = UInt32(window)
        limits.connectionWindowSize = UInt32(4 * window)
        return limits
    }

    /// A pair with one response streaming `size` bytes queued at the server.
    private static func download(size: Int) throws -> (SessionPair, Int32) {
        let pair = try SessionPair(client: limits(), server: limits())
        let stream = try pair.client.submitRequest(.request(method: "GET", scheme: "https", authority: "x.test", path: "/big"),
                                                   endStream: true)
        try pair.exchange()
        try pair.server.submitResponse(stream: stream, .response(status: 200), endStream: false)
        try pair.server.submitData(stream: stream, [UInt8](repeating: 0x61, count: size), endStream: true)
        return (pair, stream)
    }

    @Test func senderStallsAtTheWindowUntilTheReceiverConsumes() throws {
        let size = 1_000_000
        let (pair, stream) = try Self.download(size: size)
        try pair.exchange()
        var received = pair.takeClientEvents().body(of: stream).count
        #expect(received == Self.window, "the server sends exactly one stream window, then waits")
        #expect(pair.server.outboundQueuedBytes(stream: stream) == size - Self.window)
        #expect(pair.takeServerEvents().sent(on: stream) == Self.window)

        // Nothing consumed: more rounds move nothing.
        try pair.exchange()
        #expect(pair.takeClientEvents().body(of: stream).isEmpty)

        var rounds = 0
        while received < size {
            try pair.client.consume(stream: stream, count: Self.window)
            try pair.exchange()
            let chunk = pair.takeClientEvents().body(of: stream).count
            #expect(chunk <= Self.window, "never more in flight than one window")
            received += chunk
            rounds += 1
            if rounds > 100 { break }
        }
        #expect(received == size)
        #expect(pair.server.outboundQueuedBytes(stream: stream) == 0)
    }

    @Test func smallConsumptionDoesNotReopenTheWindowByItself() throws {
        let (pair, stream) = try Self.download(size: 200_000)
        try pair.exchange()
        _ = pair.takeClientEvents()
        // libnghttp2 sends WINDOW_UPDATE once half the window is consumed.
        try pair.client.consume(stream: stream, count: 100)
        try pair.exchange()
        #expect(pair.takeClientEvents().body(of: stream).isEmpty)
        try pair.client.consume(stream: stream, count: Self.window / 2)
        try pair.exchange()
        #expect(pair.takeClientEvents().body(of: stream).count == Self.window / 2 + 100)
    }

    @Test func connectionWindowBoundsAllStreamsTogether() throws {
        let pair = try SessionPair(client: Self.limits(), server: Self.limits())
        let streams = try (0..<6).map { _ in
            try pair.client.submitRequest(.request(method: "GET", scheme: "https", authority: "x.test", path: "/"), endStream: true)
        }
        try pair.exchange()
        for stream in streams {
            try pair.server.submitResponse(stream: stream, .response(status: 200), endStream: false)
            try pair.server.submitData(stream: stream, [UInt8](repeating: 1, count: 2 * Self.window), endStream: true)
        }
        try pair.exchange()
        let events = pair.takeClientEvents()
        let total = streams.reduce(0) { $0 + events.body(of: $1).count }
        #expect(total == 4 * Self.window, "the connection window (4 × 64 KiB) caps the sum of unconsumed bytes")
    }

    @Test func relayCreditsTheSourceWithWhatTheOtherSideSent() throws {
        // upstream (origin → proxy) and downstream (proxy → client): the proxy consumes on the
        // upstream only what the downstream handed out.
        let upstream = try SessionPair(client: Self.limits(), server: Self.limits())
        let downstream = try SessionPair(client: Self.limits(), server: Self.limits())
        let up = try upstream.client.submitRequest(.request(method: "GET", scheme: "https", authority: "o.test", path: "/"),
                                                   endStream: true)
        let down = try downstream.client.submitRequest(.request(method: "GET", scheme: "https", authority: "o.test", path: "/"),
                                                       endStream: true)
        try upstream.exchange()
        try downstream.exchange()
        try upstream.server.submitResponse(stream: up, .response(status: 200), endStream: false)
        try upstream.server.submitData(stream: up, [UInt8](repeating: 2, count: 300_000), endStream: true)
        try downstream.server.submitResponse(stream: down, .response(status: 200), endStream: false)

        var delivered = 0
        for _ in 0..<50 {
            try upstream.exchange()
            for event in upstream.takeClientEvents() {
                if case let .data(_, bytes, end) = event { try downstream.server.submitData(stream: down, bytes, endStream: end) }
            }
            try downstream.exchange()
            for event in downstream.takeServerEvents() {
                if case let .dataSent(_, n) = event { try upstream.client.consume(stream: up, count: n) }
            }
            // The relay never holds more than one upstream window.
            #expect(downstream.server.outboundQueuedBytes(stream: down) <= Self.window)
            let got = downstream.takeClientEvents().body(of: down).count
            delivered += got
            try downstream.client.consume(stream: down, count: got)
            if delivered == 300_000 { break }
        }
        #expect(delivered == 300_000)
    }

    @Test func resetDiscardsQueuedBytesAndSaysHowMany() throws {
        let (pair, stream) = try Self.download(size: 100_000)
        try pair.exchange()
        _ = pair.takeClientEvents()
        try pair.client.resetStream(stream, code: .cancel)
        try pair.exchange()
        let events = pair.takeServerEvents()
        #expect(events.contains(.dataDiscarded(stream: stream, count: 100_000 - Self.window)))
        #expect(events.contains(.streamClosed(stream: stream, code: .cancel)))
    }

    @Test func consumingAfterTheStreamClosedStillCreditsTheConnection() throws {
        // Stream and connection windows equal: the first download fills the connection.
        var limits = HTTP2Limits()
        limits.initialWindowSize = 65_535
        limits.connectionWindowSize = 65_535
        let pair = try SessionPair(client: limits, server: limits)
        let get = HTTP2HeaderBlock.request(method: "GET", scheme: "https", authority: "x.test", path: "/")
        let first = try pair.client.submitRequest(get, endStream: true)
        try pair.exchange()
        try pair.server.submitResponse(stream: first, .response(status: 200), endStream: false)
        try pair.server.submitData(stream: first, [UInt8](repeating: 3, count: 200_000), endStream: true)
        try pair.exchange()
        #expect(pair.takeClientEvents().body(of: first).count == 65_535)
        try pair.client.resetStream(first, code: .cancel)

        let second = try pair.client.submitRequest(get, endStream: true)
        try pair.exchange()
        try pair.server.submitResponse(stream: second, .response(status: 200), endStream: false)
        try pair.server.submitData(stream: second, [UInt8](repeating: 4, count: 1000), endStream: true)
        try pair.exchange()
        #expect(pair.takeClientEvents().body(of: second).isEmpty, "the dead stream's bytes still hold the connection window")

        try pair.client.consume(stream: first, count: 65_535)
        try pair.exchange()
        #expect(pair.takeClientEvents().body(of: second).count == 1000)
    }

    @Test func sendWindowAndOutputBudgetReflectWhatIsLeft() throws {
        let (pair, stream) = try Self.download(size: 50_000)
        #expect(pair.server.sendWindow(stream: stream) == Self.window)
        // A one-byte budget returns what the first frames make (at most one DATA frame), not everything.
        let first = pair.server.pendingOutput(maxBytes: 1)
        #expect(!first.isEmpty && first.count < 20_000)
        var events = try pair.client.receive(first)
        try pair.exchange()
        events += pair.takeClientEvents()
        #expect(events.body(of: stream).count == 50_000 && events.ended(stream))
        #expect(pair.server.sendWindow(stream: stream) == nil, "the stream finished and is forgotten")
    }
}
