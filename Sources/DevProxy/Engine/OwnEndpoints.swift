import Foundation
import Synchronization

/// DevProxy's own upstream connections, by local port and remote address. A transparent listener
/// that accepts a connection from the port of one of them, whose original destination is that
/// connection's remote end, is looking at DevProxy's own traffic redirected back by a rule that
/// does not exclude it: serving it would loop. The refused connection is marked
/// (`refuseLoop`), so the exchange that opened it says why it failed (`redirectedBack`) rather
/// than that the origin reset it.
///
/// Entries are recorded after `bind` and before `connect` (on loopback the redirected connection
/// can reach the listener before `connect` returns), and count only while their socket is open:
/// a client may reuse a port DevProxy used before. At most 4,096 are kept, closed ones pruned first.
final class OwnEndpoints: Sendable {
    private final class Entry: @unchecked Sendable {
        // Set once; the socket's own lock guards what is read through it.
        weak var socket: Socket?
        /// A transparent listener refused this connection as DevProxy's own, redirected back.
        let refused = Atomic<Bool>(false)
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

    /// Whether an open upstream connection of DevProxy's runs from `peer` to `destination`; if so
    /// it is marked as refused, for `redirectedBack(_:)`. Called before the refused connection is
    /// closed, so the mark is there by the time its upstream end reads the close.
    func refuseLoop(peer: SocketAddress, destination: SocketAddress) -> Bool {
        let key = Self.key(localPort: peer.port, remote: destination)
        return entries.withLock { entries in
            guard let entry = entries[key], entry.isOpen else { return false }
            entry.refused.store(true, ordering: .sequentiallyConsistent)
            return true
        }
    }

    /// Whether `socket`, an upstream connection of DevProxy's, came back to a transparent listener
    /// and was refused there (`refuseLoop`): its failure is that loop, not the origin's.
    func redirectedBack(_ socket: Socket) -> Bool {
        entries.withLock { entries in
            entries.values.contains { $0.socket === socket && $0.refused.load(ordering: .sequentiallyConsistent) }
        }
    }

    /// The reason an exchange whose upstream connection to `target` looped gives, in its flow
    /// (`would_loop`) and its 502.
    static func loopReason(target: String) -> String {
        "DevProxy's own connection to \(target) was redirected back to DevProxy by a rule that does not exclude "
            + "DevProxy's traffic, and refused there (it would loop): run DevProxy as its own user and exclude it "
            + "(devproxy transparent-rules --uid-exclude UID)"
    }
}

/// The failure of an upstream connection that a transparent listener refused as DevProxy's own,
/// redirected back (`OwnEndpoints.refuseLoop`): what the exchange that opened it records.
struct RedirectedBack: Error, CustomStringConvertible {
    /// `host:port` the connection was for.
    let target: String
    var description: String { OwnEndpoints.loopReason(target: target) }
}
