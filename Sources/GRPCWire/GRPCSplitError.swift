/// Why a gRPC body could not be split further.
public enum GRPCSplitError: Error, Sendable, Equatable {
    /// The flag byte at `offset` is neither 0 nor 1 (nor, with the closing flag of gRPC-Web or
    /// Connect, that bit set too): not gRPC framing (or out of step).
    case invalidFlag(UInt8, offset: Int)
    /// The body ended inside a 5-byte prefix, after `bytes` of it.
    case truncatedPrefix(bytes: Int)

    /// A few words for the flow record.
    public var note: String {
        switch self {
        case .invalidFlag(let flag, let offset): return "invalid compressed flag \(flag) at byte \(offset); splitting stopped"
        case .truncatedPrefix(let bytes): return "body ended inside a message prefix (\(bytes) of 5 bytes)"
        }
    }
}
