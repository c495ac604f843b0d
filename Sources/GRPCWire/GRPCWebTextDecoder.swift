import Foundation

/// Undoes gRPC-Web's text mode (`application/grpc-web-text`, PROTOCOL-WEB.md in grpc/grpc): the
/// body is base64, and as each frame may be encoded by itself, padding (`=`) can end a group in
/// the middle of the body, where one `Data(base64Encoded:)` of the whole would fail. Streaming:
/// chunks of any size in, decoded bytes out; a group split across chunks waits for the rest.
/// Foundation decodes each run that ends in padding (or at the chunk's last whole group).
public struct GRPCWebTextDecoder: Sendable {
    /// Why decoding stopped, if it did.
    public private(set) var error: String?
    /// Characters of a group not complete yet (at most 3 after a `feed`).
    private var pending: [UInt8] = []
    /// Characters decoded so far, for the error's position.
    private var consumed = 0

    public init() {}

    /// Decodes the next chunk of the body.
    /// - Returns: the bytes its whole groups (and the groups left over from before) decode to.
    public mutating func feed(_ chunk: [UInt8]) -> [UInt8] {
        guard error == nil else { return [] }
        pending.append(contentsOf: chunk)
        let whole = pending.count / 4 * 4
        var output: [UInt8] = []
        var start = 0
        var index = 0
        while index < whole {
            let last = index + 4 == whole
            if pending[index + 3] == UInt8(ascii: "=") || last {
                guard decode(pending[start..<(index + 4)], into: &output) else { return output }
                start = index + 4
            }
            index += 4
        }
        pending.removeFirst(whole)
        return output
    }

    /// Ends the body: a note when it ended inside a group, else nil.
    public mutating func finish() -> String? {
        defer { pending = [] }
        if let error { return error }
        return pending.isEmpty ? nil : "base64 body ended inside a group (\(pending.count) of 4 characters)"
    }

    private mutating func decode(_ run: ArraySlice<UInt8>, into output: inout [UInt8]) -> Bool {
        guard let data = Data(base64Encoded: Data(run)) else {
            error = "not base64 in characters \(consumed)–\(consumed + run.count); decoding stopped"
            return false
        }
        consumed += run.count
        output.append(contentsOf: data)
        return true
    }
}
