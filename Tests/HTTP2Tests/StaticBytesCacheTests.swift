import Testing
@testable import HTTP2

@Suite struct StaticBytesCacheTests {
    private static func pointer(_ address: Int) -> OpaquePointer { OpaquePointer(bitPattern: address)! }

    /// Bytes are made once per address, and each address gets its own, also when two addresses
    /// share a slot and take turns in it.
    @Test func eachAddressGetsItsOwnBytesAndMakesThemOnce() throws {
        var cache = StaticBytesCache()
        var made = 0
        func look(_ address: Int) -> [UInt8] {
            cache.bytes(for: Self.pointer(address)) {
                made += 1
                return Array("\(address)".utf8)
            }
        }
        #expect(look(0x1000) == Array("4096".utf8) && made == 1)
        #expect(look(0x1000) == Array("4096".utf8) && made == 1, "kept")
        // Two addresses in one slot.
        let first = 0x7F00_0000_1000
        let other = (1...100_000).lazy.map { first + $0 * 8 }
            .first { StaticBytesCache.slot(of: Self.pointer($0)) == StaticBytesCache.slot(of: Self.pointer(first)) }
        let second = try #require(other)
        made = 0
        #expect(look(first) == Array("\(first)".utf8))
        #expect(look(second) == Array("\(second)".utf8))
        #expect(look(first) == Array("\(first)".utf8))
        #expect(made == 3, "a shared slot makes the bytes again, never hands out the other's")
    }

    /// nghttp2's static table is ~120 buffers 40 bytes apart in one array: they spread over the
    /// slots instead of piling into a few.
    @Test func neighbouringBuffersSpreadOverTheSlots() {
        let slots = Set((0..<122).map { StaticBytesCache.slot(of: Self.pointer(0x5555_5555_0000 + $0 * 40)) })
        #expect(slots.count > 80, "\(slots.count) slots used")
    }
}
