/// Reads protobuf wire format one field at a time, for messages whose schema is known (a
/// `FileDescriptorSet`, a typed decoding): nothing is guessed, the caller says what each field
/// is. Groups (wire types 3 and 4, deprecated) are not read.
struct ProtoWireReader {
    enum Value {
        case varint(UInt64)
        case fixed64(UInt64)
        case fixed32(UInt32)
        case bytes(ArraySlice<UInt8>)
    }

    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    /// The next field, or nil at the end.
    /// - Throws: `ProtoWireError` for a truncated or malformed field, or a group.
    mutating func next() throws(ProtoWireError) -> (number: Int, value: Value)? {
        guard position < bytes.endIndex else { return nil }
        let offset = position - bytes.startIndex
        let key = try varint()
        let number = Int(key >> 3)
        guard number >= 1, number <= 536_870_911 else { throw ProtoWireError("field number \(number) at byte \(offset)") }
        switch key & 7 {
        case 0:
            return (number, .varint(try varint()))
        case 1:
            return (number, .fixed64(try fixed(8)))
        case 5:
            return (number, .fixed32(UInt32(try fixed(4))))
        case 2:
            let length = try varint()
            guard length <= UInt64(bytes.endIndex - position) else {
                throw ProtoWireError("field \(number) at byte \(offset) is longer than the message")
            }
            let start = position
            position += Int(length)
            return (number, .bytes(bytes[start..<position]))
        case let wire:
            throw ProtoWireError("field \(number) at byte \(offset) has wire type \(wire)\(wire == 3 ? " (a group)" : "")")
        }
    }

    private mutating func varint() throws(ProtoWireError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.endIndex, shift < 64 {
            let byte = bytes[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
        throw ProtoWireError("a varint at byte \(position - bytes.startIndex) does not end")
    }

    private mutating func fixed(_ count: Int) throws(ProtoWireError) -> UInt64 {
        guard bytes.endIndex - position >= count else {
            throw ProtoWireError("a \(count * 8)-bit value at byte \(position - bytes.startIndex) is cut short")
        }
        var result: UInt64 = 0
        for index in 0..<count { result |= UInt64(bytes[position + index]) << (8 * UInt64(index)) }
        position += count
        return result
    }

    /// The varints of a packed repeated field's bytes.
    static func packedVarints(_ bytes: ArraySlice<UInt8>) throws(ProtoWireError) -> [UInt64] {
        var reader = ProtoWireReader(bytes)
        var values: [UInt64] = []
        while reader.position < bytes.endIndex { values.append(try reader.varint()) }
        return values
    }

    /// The fixed-width values of a packed repeated field's bytes.
    static func packedFixed(_ bytes: ArraySlice<UInt8>, width: Int) throws(ProtoWireError) -> [UInt64] {
        guard bytes.count % width == 0 else { throw ProtoWireError("a packed field of \(bytes.count) bytes is not \(width)-byte values") }
        var reader = ProtoWireReader(bytes)
        var values: [UInt64] = []
        while reader.position < bytes.endIndex { values.append(try reader.fixed(width)) }
        return values
    }
}

/// Why a message could not be read with its schema.
public struct ProtoWireError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
