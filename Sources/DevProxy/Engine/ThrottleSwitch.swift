import CertAuthority
import Synchronization

/// The proxy's network conditions while it runs: `--throttle` and `--throttle-hosts` at start,
/// then whatever the web UI's throttle menu (`PUT /api/throttle`) sets, as Chrome DevTools'
/// throttling menu, Charles's Throttle toggle and Proxyman's Network Conditions change a running
/// session. A change reaches the connections already open at their next read or write (a
/// keep-alive app's next request is slowed, or sped up), not only the ones opened after it.
///
/// One per proxy, shared by every connection thread and the web UI. A connection's link reads
/// `generation` (one atomic load) before each read and write and looks at the setting only when it
/// moved, so a proxy whose throttle is off pays a load and a compare a read.
public final class ThrottleSwitch: Sendable {
    /// A profile and the hosts it slows (empty: every connection).
    public struct Setting: Sendable, Equatable, CustomStringConvertible {
        public let profile: ThrottleProfile
        public let hosts: [GlobPattern]

        public init(profile: ThrottleProfile, hosts: [GlobPattern] = []) {
            self.profile = profile
            self.hosts = hosts
        }

        /// Whether a connection to any of `hosts` is slowed (a CONNECT's target, the server name).
        public func covers(_ names: [String]) -> Bool {
            hosts.isEmpty || names.contains { name in hosts.contains { $0.matches(name) } }
        }

        /// `slow-4g (1.44 Mbit/s down, 675 kbit/s up, +563 ms), on every connection`, as the run's
        /// banner says it.
        public var description: String {
            "\(profile), on " + (hosts.isEmpty ? "every connection"
                                 : "connections to " + hosts.map(\.pattern).joined(separator: ", "))
        }
    }

    private let state: Mutex<Setting?>
    private let changes = Atomic<UInt64>(0)
    private let observers = Mutex<[@Sendable (Setting?) -> Void]>([])
    /// The client devices' shared buckets: all of one client address's throttled connections
    /// draw from one rate each way (`ThrottleDevices`).
    let devices = ThrottleDevices()

    public init(_ setting: Setting?) {
        state = Mutex(setting)
    }

    /// What is set now; nil when nothing is throttled.
    public var setting: Setting? { state.withLock { $0 } }

    /// Moves on every `set`: a link that saw another number looks at `setting` again.
    var generation: UInt64 { changes.load(ordering: .acquiring) }

    /// Sets the conditions (nil: full speed) for every connection, open or not, and tells the
    /// observers (the run's console line, the web UI's pages).
    public func set(_ setting: Setting?) {
        state.withLock { $0 = setting }
        changes.add(1, ordering: .releasing)
        for observer in observers.withLock({ $0 }) { observer(setting) }
    }

    /// Calls `observer` after each `set`, on the thread that set it.
    public func observe(_ observer: @escaping @Sendable (Setting?) -> Void) {
        observers.withLock { $0.append(observer) }
    }
}
