/// Bytes fed to a parser and not yet consumed: one array read through an index.
///
/// Consuming only moves the index; the consumed prefix is dropped when the buffer empties, or
/// when it is both over 4 KiB and over half the storage, so compaction costs amortised O(1) a byte.
/// Offsets in this API are relative to the first unconsumed byte.
struct InputBuffer: Sendable {
    private var storage: [UInt8] = []
    private var readIndex = 0

    /// Unconsumed bytes.
    var count: Int { storage.count - readIndex }

    /// Whether every byte has been consumed.
    var isEmpty: Bool { readIndex == storage.count }

    /// Appends bytes after the unconsumed ones.
    mutating func append(contentsOf bytes: some Collection<UInt8>) {
        compactIfWorthIt()
        storage.append(contentsOf: bytes)
    }

    /// Appends `bytes`; into an empty buffer the array itself becomes the storage (shared, not
    /// copied), so a body read a record at a time passes through without a copy (see `read`).
    mutating func append(_ bytes: [UInt8]) {
        guard isEmpty else { return append(contentsOf: bytes) }
        storage = bytes
        readIndex = 0
    }

    /// The unconsumed byte at `offset`.
    subscript(offset: Int) -> UInt8 {
        storage[readIndex + offset]
    }

    /// The unconsumed bytes in `range`, without copying.
    subscript(range: Range<Int>) -> ArraySlice<UInt8> {
        storage[(readIndex + range.lowerBound)..<(readIndex + range.upperBound)]
    }

    /// The offset of the first `byte` at or after `offset`, or nil.
    func firstOffset(of byte: UInt8, from offset: Int) -> Int? {
        storage.withUnsafeBufferPointer { pointer in
            var index = readIndex + offset
            while index < pointer.count {
                if pointer[index] == byte { return index - readIndex }
                index += 1
            }
            return nil
        }
    }

    /// Drops the first `n` unconsumed bytes.
    mutating func consume(_ n: Int) {
        precondition(n <= count, "consuming more than is buffered")
        readIndex += n
        if readIndex == storage.count {
            storage.removeAll(keepingCapacity: true)
            readIndex = 0
        }
    }

    /// Copies out and consumes the first `n` unconsumed bytes; when they are the whole storage,
    /// hands it over instead of copying.
    mutating func read(_ n: Int) -> [UInt8] {
        if readIndex == 0 && n == storage.count {
            defer { storage = [] }
            return storage
        }
        let bytes = Array(self[0..<n])
        consume(n)
        return bytes
    }

    /// Copies out and consumes every unconsumed byte.
    mutating func readAll() -> [UInt8] {
        read(count)
    }

    private mutating func compactIfWorthIt() {
        guard readIndex >= 4096, readIndex * 2 >= storage.count else { return }
        storage.removeSubrange(0..<readIndex)
        readIndex = 0
    }
}
