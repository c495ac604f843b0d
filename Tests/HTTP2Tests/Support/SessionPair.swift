import HTTP2

/// A client session and a server session wired back to back in memory: what one writes, the
/// other reads. Events of each side are collected in order until taken.
final class SessionPair {
    let client: HTTP2Session
    let server: HTTP2Session
    private(set) var clientEvents: [HTTP2Event] = []
    private(set) var serverEvents: [HTTP2Event] = []
    /// Bytes carried each way so far.
    private(set) var clientToServerBytes = 0
    private(set) var serverToClientBytes = 0

    init(client: HTTP2Limits = HTTP2Limits(), server: HTTP2Limits = HTTP2Limits()) throws {
        self.client = try HTTP2Session(role: .client, limits: client)
        self.server = try HTTP2Session(role: .server, limits: server)
        try exchange()
        _ = takeClientEvents()
        _ = takeServerEvents()
    }

    /// Moves bytes both ways until neither side has anything to send (at most `rounds` times).
    func exchange(rounds: Int = 1000) throws {
        for _ in 0..<rounds {
            let fromClient = client.pendingOutput()
            clientEvents += client.takeEvents()
            clientToServerBytes += fromClient.count
            if !fromClient.isEmpty { serverEvents += try server.receive(fromClient) }
            let fromServer = server.pendingOutput()
            serverEvents += server.takeEvents()
            serverToClientBytes += fromServer.count
            if !fromServer.isEmpty { clientEvents += try client.receive(fromServer) }
            if fromClient.isEmpty && fromServer.isEmpty { return }
        }
        throw TestError("the sessions still exchange bytes after \(rounds) rounds")
    }

    func takeClientEvents() -> [HTTP2Event] {
        defer { clientEvents = [] }
        return clientEvents
    }

    func takeServerEvents() -> [HTTP2Event] {
        defer { serverEvents = [] }
        return serverEvents
    }
}

/// A failure in test plumbing (not an assertion).
struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension [HTTP2Event] {
    /// Body bytes of `stream` across every `.data` event, in order.
    func body(of stream: Int32) -> [UInt8] {
        flatMap { event -> [UInt8] in
            if case let .data(s, bytes, _) = event, s == stream { return bytes }
            return []
        }
    }

    /// Whether some `.data` event of `stream` carried END_STREAM.
    func ended(_ stream: Int32) -> Bool {
        contains { if case let .data(s, _, true) = $0 { return s == stream } else { return false } }
    }

    /// The total of `.dataSent` counts for `stream`.
    func sent(on stream: Int32) -> Int {
        reduce(0) { if case let .dataSent(s, n) = $1, s == stream { return $0 + n } else { return $0 } }
    }

    /// The first request head and its stream.
    var requestHeads: [(Int32, HTTP2HeaderBlock, Bool)] {
        compactMap { if case let .requestHead(s, h, e) = $0 { return (s, h, e) } else { return nil } }
    }

    var responseHeads: [(Int32, HTTP2HeaderBlock, Bool)] {
        compactMap { if case let .responseHead(s, h, e) = $0 { return (s, h, e) } else { return nil } }
    }

    /// Every protocol error reason, with its stream.
    var protocolErrors: [(Int32, String)] {
        compactMap { if case let .protocolError(s, r) = $0 { return (s, r) } else { return nil } }
    }
}
