/// Writes protobuf's wire format: the typed encoding's messages (`ProtoSchema+Encode.swift`) and
/// server reflection's requests; `ProtoWireReader` reads it.
struct ProtoWireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func key(_ number: Int, wire: UInt64) { varint(UInt64(number) << 3 | wire) }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func fixed32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func lengthDelimited(_ number: Int, _ payload: [UInt8]) {
        key(number, wire: 2)
        varint(UInt64(payload.count))
        bytes += payload
    }
}
