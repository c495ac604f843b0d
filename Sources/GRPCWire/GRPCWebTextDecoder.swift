/// Undoes gRPC-Web's text mode (`application/grpc-web-text`, PROTOCOL-WEB.md in grpc/grpc): the
/// body is base64, and as each frame may be encoded by itself, padding (`=`) can end a group in
/// the middle of the body, where one `Data(base64Encoded:)` of the whole fails. Streaming: chunks
/// of any size in, decoded bytes out; a group split across chunks waits for the rest.
///
/// Each 4-character group is checked and decoded by itself (RFC 4648 §4 alphabet; `=` only as
/// the last one or two characters), so what comes out, and where an error is found, never depends
/// on how the body was cut into chunks (the gRPC fuzz target holds it to that). Foundation offers
/// no decoder that takes padding mid-stream group by group, hence the few lines here.
public struct GRPCWebTextDecoder: Sendable {
    /// Why decoding stopped, if it did.
    public private(set) var error: String?
    /// Characters of a group not complete yet (at most 3 after a `feed`).
    private var pending: [UInt8] = []
    /// Characters decoded so far, for the error's position.
    private var consumed = 0

    public init() {}

    /// Decodes the next chunk of the body.
    /// - Returns: the bytes its whole groups (with the characters left over from before) decode to.
    public mutating func feed(_ chunk: [UInt8]) -> [UInt8] {
        guard error == nil else { return [] }
        pending.append(contentsOf: chunk)
        let whole = pending.count / 4 * 4
        var output: [UInt8] = []
        output.reserveCapacity(whole / 4 * 3)
        var index = 0
        while index < whole {
            guard Self.decodeGroup(pending[index], pending[index + 1], pending[index + 2], pending[index + 3],
                                   into: &output) else {
                error = "not base64 in characters \(consumed + index)–\(consumed + index + 4); decoding stopped"
                pending = []
                return output
            }
            index += 4
        }
        consumed += whole
        pending.removeFirst(whole)
        return output
    }

    /// Ends the body: a note when it ended inside a group or decoding stopped, else nil.
    public mutating func finish() -> String? {
        defer { pending = [] }
        if let error { return error }
        return pending.isEmpty ? nil : "base64 body ended inside a group (\(pending.count) of 4 characters)"
    }

    /// One group's 1 to 3 bytes appended to `output`; false when the group is not base64.
    private static func decodeGroup(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, into output: inout [UInt8]) -> Bool {
        guard let first = sextet(a), let second = sextet(b) else { return false }
        let padding = UInt8(ascii: "=")
        if c == padding {
            guard d == padding else { return false }
            output.append(first << 2 | second >> 4)
            return true
        }
        guard let third = sextet(c) else { return false }
        if d == padding {
            output.append(first << 2 | second >> 4)
            output.append(second << 4 | third >> 2)
            return true
        }
        guard let fourth = sextet(d) else { return false }
        output.append(first << 2 | second >> 4)
        output.append(second << 4 | third >> 2)
        output.append(third << 6 | fourth)
        return true
    }

    /// The 6-bit value of a base64 character (RFC 4648 Table 1), nil for anything else.
    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}
