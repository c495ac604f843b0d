/// The sliding window over transport counters (whitepaper §5.4.6, after RFC 6479): a counter is
/// accepted once, and only when it is above the window's bottom, so reordered packets pass and
/// replayed or too old ones do not.
struct ReplayWindow {
    /// Counters this far behind the highest seen still pass, if not seen before.
    static let size: UInt64 = 2048
    private static let blockBits: UInt64 = 64
    private static let blockCount = Int(size / blockBits)
    private var blocks = [UInt64](repeating: 0, count: blockCount)
    /// One past the highest counter accepted; 0 before any.
    private(set) var next: UInt64 = 0

    /// Whether `counter` would be accepted, without recording it (checked before decryption).
    func wouldAccept(_ counter: UInt64) -> Bool {
        if counter >= next { return true }
        guard next - counter <= Self.size - Self.blockBits else { return false }
        let (block, bit) = position(counter)
        return blocks[block] & (1 << bit) == 0
    }

    /// Records `counter`; false when it was seen before or lies below the window.
    mutating func accept(_ counter: UInt64) -> Bool {
        guard wouldAccept(counter) else { return false }
        if counter >= next {
            // Clear the blocks the window slides past, at most all of them.
            let currentBlock = next == 0 ? -1 : Int(((next - 1) / Self.blockBits) % UInt64(Self.blockCount))
            let steps = next == 0 ? Self.blockCount : min(Int(counter / Self.blockBits - (next - 1) / Self.blockBits),
                                                        Self.blockCount)
            for i in 0..<steps {
                blocks[(currentBlock + 1 + i + Self.blockCount) % Self.blockCount] = 0
            }
            next = counter + 1
        }
        let (block, bit) = position(counter)
        blocks[block] |= 1 << bit
        return true
    }

    private func position(_ counter: UInt64) -> (Int, UInt64) {
        (Int((counter / Self.blockBits) % UInt64(Self.blockCount)), counter % Self.blockBits)
    }
}
