import Foundation
import Synchronization

/// DevProxy's own upstream connections, by their two ends. A transparent listener that accepts a
/// connection from the local end of one of them, whose original destination is that
/// connection's remote end, is looking at DevProxy's own traffic redirected back by a rule that
/// does not exclude it: serving it would loop.
///
/// Only connections still open count: a client may reuse a local port DevProxy used before, but
/// no two open connections share both ends. Entries are recorded before the handshake completes
/// (the redirected connection reaches the listener during it) and dropped once their socket is
/// closed; at most 4,096 are kept, closed ones pruned first.
final class OwnEndpoints: Sendable {
    private final class Entry: @unchecked Sendable {
        // Set once; the socket's own lock guards what is read through it.
        weak var socket: Socket?
        init(_ socket: Socket) { self.socket = socket }
        var isOpen: Bool { socket.map { !$0.isClosed } ?? false }
    }

    private let entries = Mutex<[String: Entry]>([:])
    private static let capacity = 4096

    private static func key(local: SocketAddress, remote: SocketAddress) -> String {
        "\(local) > \(remote)"
    }

    /// Records an upstream socket that is connecting to `remote`.
    func insert(_ socket: Socket, remote: SocketAddress) {
        guard let local = socket.localAddress else { return }
        let key = Self.key(local: local, remote: remote)
        entries.withLock { entries in
            if entries.count >= Self.capacity {
                entries = entries.filter { $0.value.isOpen }
                if entries.count >= Self.capacity, let any = entries.keys.first { entries[any] = nil }
            }
            entries[key] = Entry(socket)
        }
    }

    /// Whether an open upstream connection of DevProxy's runs from `peer` to `destination`.
    func contains(peer: SocketAddress, destination: SocketAddress) -> Bool {
        let key = Self.key(local: peer, remote: destination)
        return entries.withLock { $0[key]?.isOpen ?? false }
    }
}
