/// The body bytes queued on one stream, oldest first: the arrays handed to `append` are kept as
/// they are (an array's buffer is shared, not copied) and copied once, into the frame nghttp2
/// builds, when `read` takes them. A relayed download's bytes are therefore copied once between
/// the hop that received them and the one sending them, not twice.
struct ByteQueue {
    /// Queued arrays; those before `first` are spent.
    private var chunks: [[UInt8]] = []
    private var first = 0
    /// Bytes of `chunks[first]` already read.
    private var offset = 0
    /// Bytes waiting.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        count += bytes.count
    }

    mutating func append(contentsOf bytes: some Collection<UInt8>) {
        // The common caller passes an array: keep it; anything else is copied once, in one piece.
        if let array = bytes as? [UInt8] {
            append(array)
        } else {
            append(Array(bytes))
        }
    }

    /// Copies up to `max` bytes into `destination` and drops them from the queue.
    /// - Returns: how many bytes were copied.
    mutating func read(into destination: UnsafeMutablePointer<UInt8>, max: Int) -> Int {
        var copied = 0
        while copied < max, first < chunks.count {
            let taken = chunks[first].withUnsafeBufferPointer { source in
                let n = Swift.min(max - copied, source.count - offset)
                (destination + copied).update(from: source.baseAddress! + offset, count: n)
                return n
            }
            copied += taken
            offset += taken
            if offset == chunks[first].count {
                // Let the spent array go now: memory follows what is still queued.
                chunks[first] = []
                first += 1
                offset = 0
            }
        }
        count -= copied
        if first == chunks.count {
            chunks.removeAll(keepingCapacity: chunks.capacity <= 64)
            first = 0
        } else if first > 32 && first * 2 > chunks.count {
            chunks.removeFirst(first)
            first = 0
        }
        return copied
    }

    /// Empties the queue, returning what was in it, oldest first.
    mutating func takeAll() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        for index in first..<chunks.count {
            bytes.append(contentsOf: chunks[index][(index == first ? offset : 0)...])
        }
        _ = removeAll()
        return bytes
    }

    /// Empties the queue.
    /// - Returns: how many bytes were dropped.
    mutating func removeAll() -> Int {
        let n = count
        chunks = []
        first = 0
        offset = 0
        count = 0
        return n
    }
}
