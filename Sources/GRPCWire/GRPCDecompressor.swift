/// A decompressed message, or as much of it as could be decompressed.
public struct GRPCDecompressed: Sendable, Equatable {
    public var bytes: [UInt8]
    /// Whether `bytes` is the whole message: false when the data was damaged, cut short, or
    /// larger than the output limit.
    public var complete: Bool
    /// Why it is not complete, in a few words.
    public var note: String?

    public init(bytes: [UInt8], complete: Bool, note: String? = nil) {
        self.bytes = bytes
        self.complete = complete
        self.note = note
    }
}

/// Undoes a message's `grpc-encoding`. The proxy supplies one backed by its content decoders
/// (zlib, zstd), so this module stays free of C libraries.
public protocol GRPCDecompressor: Sendable {
    /// Decompresses one message, producing at most `outputLimit` bytes.
    /// - Returns: `nil` when `encoding` is not one this decompressor knows.
    func decompress(_ bytes: [UInt8], encoding: GRPCEncoding, outputLimit: Int) -> GRPCDecompressed?
}

/// A decompressor that knows only `identity`: the default where no real one is supplied.
public struct IdentityDecompressor: GRPCDecompressor {
    public init() {}

    public func decompress(_ bytes: [UInt8], encoding: GRPCEncoding, outputLimit: Int) -> GRPCDecompressed? {
        guard encoding == .identity else { return nil }
        let kept = Array(bytes.prefix(outputLimit))
        return GRPCDecompressed(bytes: kept, complete: kept.count == bytes.count,
                                note: kept.count == bytes.count ? nil : "output limit of \(outputLimit) bytes reached")
    }
}
