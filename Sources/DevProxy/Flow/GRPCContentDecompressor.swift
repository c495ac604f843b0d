import GRPCWire

/// Undoes a gRPC message's `grpc-encoding` with the body decoders: gzip, deflate and zstd
/// (`identity` passes through); any other encoding is reported as unknown (`nil`).
public struct GRPCContentDecompressor: GRPCDecompressor {
    public init() {}

    public func decompress(_ bytes: [UInt8], encoding: GRPCEncoding, outputLimit: Int) -> GRPCDecompressed? {
        let coding: ContentCoding
        switch encoding {
        case .identity: return IdentityDecompressor().decompress(bytes, encoding: encoding, outputLimit: outputLimit)
        case .gzip: coding = .gzip
        case .deflate: coding = .deflate
        case .zstd: coding = .zstd
        default: return nil
        }
        guard let output = ContentDecoder.decode(bytes, coding: coding, outputLimit: outputLimit) else {
            return GRPCDecompressed(bytes: [], complete: false, note: "not valid \(encoding) data")
        }
        switch output.end {
        case .complete: return GRPCDecompressed(bytes: output.bytes, complete: true)
        case .outputLimit:
            return GRPCDecompressed(bytes: output.bytes, complete: false, note: "output limit of \(outputLimit) bytes reached")
        case .inputEnded: return GRPCDecompressed(bytes: output.bytes, complete: false, note: "data cut short")
        case .corrupt: return GRPCDecompressed(bytes: output.bytes, complete: false, note: "data damaged after \(output.bytes.count) bytes")
        }
    }
}
