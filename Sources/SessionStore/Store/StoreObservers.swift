import Foundation

/// The callbacks told about each committed batch (`SessionStore.addObserver`).
final class StoreObservers: @unchecked Sendable {
    private let lock = NSLock()
    private var observers: [Int: @Sendable (StoreChanges) -> Void] = [:]
    private var next = 0

    /// Adds `observer`; returns its token.
    func add(_ observer: @escaping @Sendable (StoreChanges) -> Void) -> Int {
        lock.withLock {
            next += 1
            observers[next] = observer
            return next
        }
    }

    func remove(_ token: Int) {
        _ = lock.withLock { observers.removeValue(forKey: token) }
    }

    /// Calls every observer with `changes`, outside the lock (an observer may add or remove one).
    func deliver(_ changes: StoreChanges) {
        for observer in lock.withLock({ Array(observers.values) }) { observer(changes) }
    }
}
