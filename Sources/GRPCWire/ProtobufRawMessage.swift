/// A protobuf message decoded without its schema, as `protoc --decode_raw` does: field numbers,
/// wire types and values, with guesses for what a length-delimited value is.
public struct ProtobufRawMessage: Sendable, Equatable {
    /// The fields in wire order (a repeated field appears once per occurrence).
    public var fields: [ProtobufRawField]
    /// Why decoding stopped before the end, when it did; `fields` holds what came before.
    public var error: String?
    /// For a length-delimited value read as this message: its bytes as text, when they are
    /// printable UTF-8 too. Short strings often parse as messages (`hi` is field 13 = 105), and
    /// protoc's order, which prefers the message, hid them.
    public var text: String? = nil

    public init(fields: [ProtobufRawField], error: String? = nil) {
        self.fields = fields
        self.error = error
    }
}

/// One field occurrence on the wire.
public struct ProtobufRawField: Sendable, Equatable {
    /// 1 ... 2^29 - 1.
    public var number: Int
    public var value: ProtobufRawValue

    public init(number: Int, value: ProtobufRawValue) {
        self.number = number
        self.value = value
    }

    /// The wire type the value came in.
    public var wireType: ProtobufWireType { value.wireType }
}

/// The wire types of the protobuf encoding ("Message Structure" in protobuf.dev/programming-guides/encoding).
public enum ProtobufWireType: Int, Sendable, Equatable {
    case varint = 0, i64 = 1, len = 2, startGroup = 3, endGroup = 4, i32 = 5
}

/// A field's value, with the interpretation chosen for length-delimited data.
public enum ProtobufRawValue: Sendable, Equatable {
    /// Wire type 0, as unsigned.
    case varint(UInt64)
    /// Wire type 1.
    case fixed64(UInt64)
    /// Wire type 5.
    case fixed32(UInt32)
    /// Wire type 2 that parses fully as a message.
    case message(ProtobufRawMessage)
    /// Wire type 2 that is printable UTF-8 (and not a message).
    case string(String)
    /// Wire type 2, anything else.
    case bytes([UInt8])
    /// Wire types 3 … 4: the fields between a start and its matching end.
    case group(ProtobufRawMessage)

    public var wireType: ProtobufWireType {
        switch self {
        case .varint: return .varint
        case .fixed64: return .i64
        case .fixed32: return .i32
        case .message, .string, .bytes: return .len
        case .group: return .startGroup
        }
    }

    /// A varint read as zigzag-encoded (`sint32`/`sint64`).
    public static func zigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}
