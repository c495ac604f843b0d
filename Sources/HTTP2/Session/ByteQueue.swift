/// A FIFO of bytes that reads from the front without shifting the rest on every read.
struct ByteQueue {
    private var storage: [UInt8] = []
    private var head = 0

    /// Bytes waiting.
    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func append(contentsOf bytes: some Collection<UInt8>) {
        storage.append(contentsOf: bytes)
    }

    /// Copies up to `max` bytes into `destination` and drops them from the queue.
    /// - Returns: how many bytes were copied.
    mutating func read(into destination: UnsafeMutablePointer<UInt8>, max: Int) -> Int {
        let n = Swift.min(max, count)
        guard n > 0 else { return 0 }
        storage.withUnsafeBufferPointer { source in
            destination.update(from: source.baseAddress! + head, count: n)
        }
        head += n
        // Compact once the consumed prefix dominates, so memory follows what is still queued.
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 65_536)
            head = 0
        } else if head > 65_536 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return n
    }

    /// Empties the queue.
    /// - Returns: how many bytes were dropped.
    mutating func removeAll() -> Int {
        let n = count
        storage = []
        head = 0
        return n
    }
}
