/// Decodes protobuf wire format without a schema, like `protoc --decode_raw`.
///
/// A length-delimited value becomes a nested message when it is non-empty and parses fully
/// (within the depth limit), otherwise a string when it is printable UTF-8, otherwise bytes —
/// protoc's order; a message whose bytes are printable UTF-8 too keeps that text beside it
/// (`ProtobufRawMessage.text`), since short strings often parse as messages. Malformed input gives the fields before the damage and an `error`; nothing
/// traps. Work is O(input × maxDepth) and the output at most `maxFields` fields.
public struct ProtobufRawDecoder: Sendable {
    /// Bounds on the work and the output. Every default is stated.
    public struct Limits: Sendable, Equatable {
        /// Nesting of messages and groups: 32 (protoc's own budget is 100).
        public var maxDepth: Int
        /// Fields in the whole result: 10 000.
        public var maxFields: Int
        /// Input bytes looked at; the rest is reported as not decoded: 4 MiB.
        public var maxInputBytes: Int

        public init(maxDepth: Int = 32, maxFields: Int = 10_000, maxInputBytes: Int = 4 << 20) {
            self.maxDepth = maxDepth
            self.maxFields = maxFields
            self.maxInputBytes = maxInputBytes
        }
    }

    public let limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Decodes one message.
    public func decode(_ bytes: [UInt8]) -> ProtobufRawMessage {
        decode(prefix: bytes, of: bytes.count)
    }

    /// Decodes `bytes`, the first of a message of `total` bytes (nil: of a size not known), all
    /// that was kept of it. Where they (or the `maxInputBytes` looked at) end inside a field, the
    /// error says so (`the 4096 bytes kept of 3145733 end inside field 1`, `stopped after 65536 of
    /// 100000 bytes (input limit), inside field 3`), where it called the message malformed
    /// (`length-delimited field 1 overruns the data`). The fields before it are decoded as usual.
    public func decode(prefix bytes: [UInt8], of total: Int?) -> ProtobufRawMessage {
        bytes.withUnsafeBufferPointer { buffer in
            let input = UnsafeBufferPointer(rebasing: buffer.prefix(limits.maxInputBytes))
            var parser = Parser(input: input, limits: limits)
            var position = 0
            var message = parser.fields(from: &position, to: input.count, depth: 0, group: nil)
            let whole = total ?? Int.max
            if message.error == nil, bytes.count > input.count {
                message.error = "stopped after \(input.count) of \(bytes.count) bytes (input limit)"
            } else if message.error != nil, input.count < whole, let cut = parser.cutByTheEnd, cut.reach <= whole {
                // Only a field that would end within the whole message was cut by where the bytes
                // stop; one longer than the message is damage, said as the parser says it.
                let field = cut.field == 0 ? "a field's tag" : "field \(cut.field)"
                message.error = input.count < bytes.count
                    ? "stopped after \(input.count) of \(bytes.count) bytes (input limit), inside \(field)"
                    : "the \(bytes.count) bytes kept\(total.map { " of \($0)" } ?? "") end inside \(field)"
            }
            return message
        }
    }
}

/// The recursive descent behind `ProtobufRawDecoder`; `fieldCount` is shared by every level.
private struct Parser {
    let input: UnsafeBufferPointer<UInt8>
    let limits: ProtobufRawDecoder.Limits
    var fieldCount = 0
    /// The top-level field the input ended inside (0: inside a tag) and the byte its value would
    /// end at (as far as known), when that stopped decoding.
    var cutByTheEnd: (field: Int, reach: Int)?

    init(input: UnsafeBufferPointer<UInt8>, limits: ProtobufRawDecoder.Limits) {
        self.input = input
        self.limits = limits
    }

    /// The fields in `position..<end`, or up to the end-group tag of `group`.
    mutating func fields(from position: inout Int, to end: Int, depth: Int, group: Int?) -> ProtobufRawMessage {
        var found: [ProtobufRawField] = []
        func stop(_ reason: String) -> ProtobufRawMessage { ProtobufRawMessage(fields: found, error: reason) }
        while position < end {
            let start = position
            guard let tag = varint(&position, end), tag <= UInt32.max else {
                if depth == 0, position >= end { cutByTheEnd = (0, end) }
                return stop("bad tag at byte \(start)")
            }
            let number = Int(tag >> 3)
            guard number >= 1, number <= (1 << 29) - 1 else { return stop("field number \(number) at byte \(start)") }
            guard let wireType = ProtobufWireType(rawValue: Int(tag & 7)) else {
                return stop("wire type \(tag & 7) at byte \(start)")
            }
            if wireType == .endGroup {
                guard group == number else { return stop("end of group \(number) that was not open, at byte \(start)") }
                return ProtobufRawMessage(fields: found)
            }
            guard fieldCount < limits.maxFields else { return stop("field limit of \(limits.maxFields) reached") }
            fieldCount += 1
            let value: ProtobufRawValue
            switch wireType {
            case .varint:
                guard let raw = varint(&position, end) else {
                    if depth == 0, position >= end { cutByTheEnd = (number, end) }
                    return stop("bad varint at byte \(position)")
                }
                value = .varint(raw)
            case .i64:
                guard end - position >= 8 else {
                    if depth == 0 { cutByTheEnd = (number, position + 8) }
                    return stop("fixed64 cut short at byte \(position)")
                }
                value = .fixed64(littleEndian(at: position, count: 8))
                position += 8
            case .i32:
                guard end - position >= 4 else {
                    if depth == 0 { cutByTheEnd = (number, position + 4) }
                    return stop("fixed32 cut short at byte \(position)")
                }
                value = .fixed32(UInt32(littleEndian(at: position, count: 4)))
                position += 4
            case .len:
                guard let length = varint(&position, end) else {
                    if depth == 0, position >= end { cutByTheEnd = (number, end) }
                    return stop("length-delimited field \(number) overruns the data at byte \(start)")
                }
                guard length <= UInt64(end - position) else {
                    // The value runs past the bytes there are: where it would end, for a prefix's check.
                    if depth == 0 {
                        cutByTheEnd = (number, length > UInt64(Int.max - position) ? Int.max : position + Int(length))
                    }
                    return stop("length-delimited field \(number) overruns the data at byte \(start)")
                }
                value = delimited(position..<(position + Int(length)), depth: depth)
                position += Int(length)
            case .startGroup:
                guard depth < limits.maxDepth else { return stop("groups nested deeper than \(limits.maxDepth)") }
                let inner = self.fields(from: &position, to: end, depth: depth + 1, group: number)
                found.append(ProtobufRawField(number: number, value: .group(inner)))
                if let error = inner.error { return stop("in group \(number): \(error)") }
                continue
            case .endGroup:
                preconditionFailure("handled above")
            }
            found.append(ProtobufRawField(number: number, value: value))
        }
        return group.map { stop("group \($0) not closed") } ?? ProtobufRawMessage(fields: found)
    }

    /// A length-delimited value: a message if it parses fully, else a string, else bytes.
    private mutating func delimited(_ range: Range<Int>, depth: Int) -> ProtobufRawValue {
        if !range.isEmpty, depth < limits.maxDepth {
            let countBefore = fieldCount
            var position = range.lowerBound
            var nested = fields(from: &position, to: range.upperBound, depth: depth + 1, group: nil)
            if nested.error == nil {
                nested.text = Self.printableText(UnsafeBufferPointer(rebasing: input[range]))
                return .message(nested)
            }
            fieldCount = countBefore
        }
        let slice = UnsafeBufferPointer(rebasing: input[range])
        if let text = Self.printableText(slice) { return .string(text) }
        return .bytes(Array(slice))
    }

    /// `bytes` as a string when they are valid UTF-8 with no control characters but tab, CR and LF.
    static func printableText(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        for byte in bytes where (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) || byte == 0x7F {
            return nil
        }
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var text = ""
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): text.unicodeScalars.append(scalar)
            case .emptyInput: return text
            case .error: return nil
            }
        }
    }

    /// A base-128 varint of at most 10 bytes; `nil` when longer or cut short.
    private func varint(_ position: inout Int, _ end: Int) -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            guard position < end else { return nil }
            let byte = input[position]
            position += 1
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }

    private func littleEndian(at position: Int, count: Int) -> UInt64 {
        (0..<count).reduce(UInt64(0)) { $0 | UInt64(input[position + $1]) << UInt64(8 * $1) }
    }
}
