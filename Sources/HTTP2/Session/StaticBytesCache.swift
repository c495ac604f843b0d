/// Bytes kept by the address of the static buffer they were copied from: a table of 128 slots,
/// a slot picked by a multiplicative hash of the address. A `Dictionary` hashed every look-up
/// with SipHash, ~1 % of a proxied HTTP/2 stream's CPU for the ~30 names and values each stream
/// carries (docs/performance.md, "Run 37"). Two addresses that meet in one slot take turns (the
/// bytes are copied again); a look-up never returns another address's bytes.
struct StaticBytesCache {
    static let slotCount = 128
    private var keys: [OpaquePointer?] = []
    private var values: [[UInt8]] = []

    /// `key`'s bytes: the ones kept for it, or `make()`'s, then kept.
    mutating func bytes(for key: OpaquePointer, otherwise make: () -> [UInt8]) -> [UInt8] {
        if keys.isEmpty {
            keys = Array(repeating: nil, count: Self.slotCount)
            values = Array(repeating: [], count: Self.slotCount)
        }
        let slot = Self.slot(of: key)
        if keys[slot] == key { return values[slot] }
        let bytes = make()
        keys[slot] = key
        values[slot] = bytes
        return bytes
    }

    /// Fibonacci hashing: the top 7 bits of the address times 2^64 / φ.
    static func slot(of key: OpaquePointer) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: key)) &* 0x9E37_79B9_7F4A_7C15) >> 57)
    }
}
