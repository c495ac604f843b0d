/// Splits a gRPC body into its length-prefixed messages as the body streams through, in chunks
/// of any size.
///
/// Memory is bounded whatever the input: a message is held whole only up to `heldBytes` (so it
/// can be decompressed and decoded); of a larger one only the first `keptBytes` are kept and the
/// rest is counted. A declared length never causes an allocation by itself. After an invalid
/// flag byte the splitter stops and records why (`error`).
public struct GRPCMessageSplitter: Sendable {
    /// How much of each message is kept. Every default is stated.
    public struct Limits: Sendable, Equatable {
        /// Leading bytes kept of a message too large to hold: 4 KiB, enough to show.
        public var keptBytes: Int
        /// Messages up to this size are held whole: 1 MiB.
        public var heldBytes: Int

        public init(keptBytes: Int = 4096, heldBytes: Int = 1 << 20) {
            precondition(keptBytes >= 0 && heldBytes >= 0, "gRPC splitter limits cannot be negative")
            self.keptBytes = keptBytes
            self.heldBytes = heldBytes
        }
    }

    public let limits: Limits
    /// The flag bit of a closing frame: gRPC-Web's trailers (0x80), Connect's end of stream (0x02);
    /// nil for gRPC, whose flag byte is only 0 or 1.
    public let closingFlag: UInt8?
    /// Why splitting stopped, if it did.
    public private(set) var error: GRPCSplitError?
    /// Body bytes consumed so far.
    public private(set) var offset = 0

    private var prefix: [UInt8] = []
    private var current: GRPCWireMessage?

    public init(limits: Limits = Limits(), closingFlag: UInt8? = nil) {
        self.limits = limits
        self.closingFlag = closingFlag
    }

    /// Consumes the next chunk of the body.
    /// - Returns: the messages the chunk completed, in order.
    public mutating func feed(_ chunk: [UInt8]) -> [GRPCWireMessage] {
        chunk.withUnsafeBytes { feed($0) }
    }

    /// Consumes the next chunk of the body.
    /// - Returns: the messages the chunk completed, in order.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer) -> [GRPCWireMessage] {
        var completed: [GRPCWireMessage] = []
        var index = 0
        while index < chunk.count, error == nil {
            if var message = current {
                let take = min(message.length - message.received, chunk.count - index)
                let room = (message.isHeld ? message.length : limits.keptBytes) - message.bytes.count
                if room > 0 {
                    message.bytes.append(contentsOf: chunk[index..<(index + min(take, room))])
                }
                message.received += take
                index += take
                if message.isComplete {
                    completed.append(message)
                    current = nil
                } else {
                    current = message
                }
                continue
            }
            if prefix.isEmpty, chunk[index] & ~(1 | (closingFlag ?? 0)) != 0 {
                error = .invalidFlag(chunk[index], offset: offset + index)
                break
            }
            prefix.append(chunk[index])
            index += 1
            guard prefix.count == 5 else { continue }
            let length = prefix[1...4].reduce(0) { $0 << 8 | Int($1) }
            let message = GRPCWireMessage(compressed: prefix[0] & 1 == 1, length: length, received: 0, bytes: [],
                                          isHeld: length <= limits.heldBytes,
                                          isTrailers: closingFlag.map { prefix[0] & $0 != 0 } ?? false)
            prefix.removeAll(keepingCapacity: true)
            if length == 0 {
                completed.append(message)
            } else {
                current = message
            }
        }
        offset += index
        return completed
    }

    /// Ends the body.
    /// - Returns: the message the body cut short, if any (`isComplete` false). A body that ended
    ///   inside a prefix sets `error` instead.
    public mutating func finish() -> GRPCWireMessage? {
        if error == nil, !prefix.isEmpty {
            error = .truncatedPrefix(bytes: prefix.count)
        }
        defer { current = nil; prefix.removeAll() }
        return error == nil ? current : nil
    }
}
