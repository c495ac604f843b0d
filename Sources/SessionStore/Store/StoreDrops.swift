/// What the store could not keep because its queue was full: the UI says so.
public struct StoreDrops: Sendable, Equatable {
    /// Bodies left out of flows that were stored (each request or response body counts one).
    public var bodies: Int
    /// Lifecycle events (started, responded, finished) not stored at all.
    public var records: Int

    public init(bodies: Int = 0, records: Int = 0) {
        self.bodies = bodies
        self.records = records
    }
}
