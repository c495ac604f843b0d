import CertAuthority
import Foundation
import Synchronization

extension ProxyServer {
    /// Offline was switched on (the web UI's throttle menu, `PUT /api/throttle`): each open
    /// connection it covers is cut as a lost network cuts it, whatever flows on it (a download, a
    /// long poll, a WebSocket, a tunnel, an HTTP/2 connection's streams), so an app's reconnect
    /// and resume paths can be tried. Connections to hosts `--throttle-hosts` leaves out go on.
    /// Runs on the thread that set it; each cut is a few system calls and wakes the connection's
    /// own thread, which ends its flows as it would on any failure.
    func cutOffline(_ setting: ThrottleSwitch.Setting) {
        let cut = offlineCuts.begin()
        for connection in openConnections where connection.isCut(byOffline: setting) {
            // Known before the cut: its thread may record its flows at once.
            offlineCuts.add(connection, at: cut, profile: setting.profile.name)
            connection.cutAsLost()
        }
    }
}

/// The connections Offline cut, kept a while so that the flows they end (recorded by their own
/// threads, an HTTP/2 connection's streams a moment later) say `offline`, not the client closing.
/// A connection is known by its client's address and listener: a flow that started after the
/// cut is a new connection's that happens to reuse the address.
final class OfflineCuts: Sendable {
    struct Cut {
        /// The system's uptime and the wall clock at the cut.
        let uptime: TimeInterval
        let date: Date
        let profile: String
    }

    private let cuts = Mutex<[String: Cut]>([:])
    private let count = Atomic<Int>(0)

    /// How long a cut connection's flows are looked for: long past any flow's end after a cut.
    static let keep: TimeInterval = 300

    /// Whether any cut is kept (one atomic load per flow otherwise).
    var any: Bool { count.load(ordering: .relaxed) > 0 }

    /// The moment of a cut about to be made.
    func begin() -> Cut {
        Cut(uptime: ProcessInfo.processInfo.systemUptime, date: Date(), profile: "")
    }

    func add(_ connection: ClientConnection, at cut: Cut, profile: String) {
        let key = Self.key(client: connection.clientAddress, listener: connection.listenerInfo.address)
        cuts.withLock { cuts in
            cuts = cuts.filter { cut.uptime - $0.value.uptime < Self.keep }
            cuts[key] = Cut(uptime: cut.uptime, date: cut.date, profile: profile)
            count.store(cuts.count, ordering: .relaxed)
        }
    }

    private static func key(client: String, listener: String?) -> String { client + " " + (listener ?? "") }

    /// Records `flow` as cut by Offline when its connection was cut while it ran: it failed after
    /// the cut (the client's reset, the origin's shut socket, seen from inside), or it is a
    /// tunnel or WebSocket that ended after it. The failure seen from inside stays in the message,
    /// unless it is the cut itself (the client's side closing).
    func mark(_ flow: inout Flow) {
        let key = Self.key(client: flow.client, listener: flow.listener?.address)
        let now = ProcessInfo.processInfo.systemUptime
        guard let cut = cuts.withLock({ cuts -> Cut? in
            guard let cut = cuts[key] else { return nil }
            if now - cut.uptime >= Self.keep {
                cuts[key] = nil
                count.store(cuts.count, ordering: .relaxed)
                return nil
            }
            return cut
        }) else { return }
        // A later connection from the same address: its flows began after the cut.
        guard let started = ISO8601.date(flow.started), started.timeIntervalSince(cut.date) <= 0.001 else { return }
        if let error = flow.error {
            guard (error.recordedAt ?? .infinity) >= cut.uptime, error.kind != FlowErrorKind.offline.rawValue else { return }
        } else {
            guard flow.mode == .tunnel || flow.response?.status == 101 || flow.response == nil else { return }
        }
        let inside = flow.error.flatMap {
            $0.kind == FlowErrorKind.clientClosed.rawValue ? nil : " (seen inside: \($0.kind): \($0.message))"
        } ?? ""
        flow.error = Flow.FlowError(kind: FlowErrorKind.offline.rawValue,
                                    message: "the throttle was switched to Offline while this ran: DevProxy cut the "
                                       + "client's connection as a lost network does (a reset, no close), after the "
                                       + "bytes recorded here" + inside,
                                   alert: nil, afterBytes: flow.error?.afterBytes,
                                   recordedAt: flow.error?.recordedAt ?? now)
        flow.throttle = cut.profile
    }
}
