/// The bytes of one captured body that the session store keeps beyond the flow log's part: a
/// spool file, or (a body under the in-memory head but over a small `--body-limit`) the head
/// itself. Handed with the finished flow to the store, whose writer copies it into `bodies`.
public final class SpooledBody: Sendable {
    /// The file, when the body went past the in-memory head.
    public let file: SpoolFile?
    /// The bytes, when it did not.
    public let head: [UInt8]

    public init(file: SpoolFile) {
        self.file = file
        head = []
    }

    public init(head: [UInt8]) {
        file = nil
        self.head = head
    }

    /// Bytes held (the body's first `length` bytes).
    public var length: Int { file?.length ?? head.count }

    /// False when the spool's budget refused part of what the store would keep.
    public var isComplete: Bool { file?.isComplete ?? true }

    /// The first `count` bytes (fewer when shorter); nil when the file cannot be read.
    public func prefix(_ count: Int) -> [UInt8]? {
        guard let file else { return Array(head.prefix(count)) }
        return file.read(count: count)
    }

    /// Calls `body` with the first `total` bytes in pieces of at most `chunkSize`.
    /// - Returns: false when the file could not be read.
    @discardableResult
    public func chunks(upTo total: Int, chunkSize: Int = 256 * 1024,
                       _ body: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Bool {
        guard let file else {
            try head.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0.prefix(total))) }
            return true
        }
        return try file.chunks(upTo: total, chunkSize: chunkSize, body)
    }
}

extension SpooledBody: Equatable {
    /// The same captured body.
    public static func == (left: SpooledBody, right: SpooledBody) -> Bool { left === right }
}
