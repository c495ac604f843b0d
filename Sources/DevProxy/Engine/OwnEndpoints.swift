import Foundation
import Synchronization

/// DevProxy's own upstream connections, by local port and remote address. A transparent listener
/// that accepts a connection from the port of one of them, whose original destination is that
/// connection's remote end, is looking at DevProxy's own traffic redirected back by a rule that
/// does not exclude it: serving it would loop.
///
/// Entries are recorded after `bind` and before `connect` (on loopback the redirected connection
/// can reach the listener before `connect` returns), and count only while their socket is open:
/// a client may reuse a port DevProxy used before. At most 4,096 are kept, closed ones pruned first.
final class OwnEndpoints: Sendable {
    private final class Entry: @unchecked Sendable {
        // Set once; the socket's own lock guards what is read through it.
        weak var socket: Socket?
        init(_ socket: Socket) { self.socket = socket }
        var isOpen: Bool { socket.map { !$0.isClosed } ?? false }
    }

    private let entries = Mutex<[String: Entry]>([:])
    private static let capacity = 4096

    private static func key(localPort: Int, remote: SocketAddress) -> String {
        "\(localPort) > \(remote)"
    }

    /// Records an upstream socket that is connecting to `remote`.
    func insert(_ socket: Socket, remote: SocketAddress) {
        guard let local = socket.localAddress else { return }
        let key = Self.key(localPort: local.port, remote: remote)
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
        let key = Self.key(localPort: peer.port, remote: destination)
        return entries.withLock { $0[key]?.isOpen ?? false }
    }
}
