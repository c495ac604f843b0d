import Foundation
import Synchronization

/// The local `address:port` of upstream connections DevProxy opened lately. A transparent
/// listener that accepts a connection from one of them is looking at DevProxy's own traffic
/// redirected back by a rule that does not exclude it: serving it would loop.
///
/// Entries are recorded before the handshake completes and kept 30 s (a redirected connection
/// arrives within milliseconds); at most 4,096, the oldest dropped first.
final class OwnEndpoints: Sendable {
    private let entries = Mutex<[String: Date]>([:])
    private static let lifetime: TimeInterval = 30
    private static let capacity = 4096

    func insert(_ address: SocketAddress) {
        let key = address.description, now = Date()
        entries.withLock { entries in
            if entries.count >= Self.capacity {
                entries = entries.filter { now.timeIntervalSince($0.value) < Self.lifetime }
                if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value < $1.value }) {
                    entries[oldest.key] = nil
                }
            }
            entries[key] = now
        }
    }

    func contains(_ address: SocketAddress) -> Bool {
        let key = address.description
        return entries.withLock { entries in
            guard let since = entries[key] else { return false }
            return Date().timeIntervalSince(since) < Self.lifetime
        }
    }
}
