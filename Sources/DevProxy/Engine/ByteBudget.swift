import Synchronization

/// A number of bytes that bodies held in memory share (breakpoints' held requests, request
/// bodies `--modify-body` gathers from HTTP/2 streams): a part is kept only when the budget has
/// room for it, and given back when it is let go, so many connections together keep at most
/// `limit`.
public final class ByteBudget: Sendable {
    public let limit: Int
    private let taken = Atomic<Int>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Takes `count` bytes; false when they would pass `limit` (nothing is taken then). Each
    /// byte taken is given back with `release`.
    public func reserve(_ count: Int) -> Bool {
        var current = taken.load(ordering: .relaxed)
        while true {
            guard current + count <= limit else { return false }
            let (exchanged, original) = taken.compareExchange(expected: current, desired: current + count,
                                                              ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back bytes `reserve` took.
    public func release(_ count: Int) {
        if count > 0 { taken.subtract(count, ordering: .relaxed) }
    }

    /// The bytes taken now.
    public var bytes: Int { taken.load(ordering: .relaxed) }

    /// `limit` as a person reads it: `64 MiB`, or bytes when it is not whole MiB.
    public var limitText: String { limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes" }
}
