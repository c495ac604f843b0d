import CCompression

/// One zlib inflate stream: owns a `z_stream` and ends it in `deinit`.
final class ZlibInflater: ContentInflater {
    /// The framing around the DEFLATE data.
    enum Format {
        case gzip, zlib, raw

        // zlib's inflateInit2 encodes the framing in windowBits: 8...15 zlib, -15 raw, +16 gzip.
        var windowBits: Int32 {
            switch self {
            case .gzip: return 16 + MAX_WBITS
            case .zlib: return MAX_WBITS
            case .raw: return -MAX_WBITS
            }
        }
    }

    private let format: Format
    private let stream: UnsafeMutablePointer<z_stream>
    private var chunk: [UInt8]
    /// A gzip member ended at the end of the last piece (another may follow).
    private var memberEnded = false
    /// The last piece's last byte when it may begin the next member's magic number.
    private var heldByte: UInt8?

    /// - Parameter chunkSize: the output buffer's size (64 KiB for bodies; less where many
    ///   inflaters live long, as a WebSocket's do).
    /// - Returns: `nil` when zlib cannot allocate its state.
    init?(format: Format, chunkSize: Int = 64 * 1024) {
        self.format = format
        chunk = [UInt8](repeating: 0, count: chunkSize)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard CCompression_inflateInit2(stream, format.windowBits) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Decodes `input`, the next piece of the body (see `ContentInflater`).
    func decode(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Bool) -> ContentDecoder.End? {
        guard !input.isEmpty, let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        if memberEnded {
            // A gzip member ended with the last piece: this one may start the next (whose first
            // byte may have come last in the previous piece).
            memberEnded = false
            if let held = heldByte {
                heldByte = nil
                memberEnded = true
                return ([held] + input).withUnsafeBytes { decode($0, emit: emit) }
            }
            guard input.count >= 2, input[0] == 0x1F, input[1] == 0x8B, inflateReset(stream) == Z_OK else {
                return .complete
            }
        }
        var consumed = 0
        return chunk.withUnsafeMutableBufferPointer { target in
            while true {
                if stream.pointee.avail_in == 0 && consumed < input.count {
                    // avail_in is 32 bits wide; feed very large inputs in slices.
                    let slice = min(input.count - consumed, Int(UInt32.max))
                    stream.pointee.next_in = UnsafeMutablePointer(mutating: base + consumed)
                    stream.pointee.avail_in = UInt32(slice)
                    consumed += slice
                }
                stream.pointee.next_out = target.baseAddress
                stream.pointee.avail_out = UInt32(target.count)
                let status = CCompression.inflate(stream, Z_NO_FLUSH)
                let produced = target.count - Int(stream.pointee.avail_out)
                let piece = UnsafeRawBufferPointer(start: target.baseAddress, count: produced)
                if produced > 0 && !emit(piece) { return .outputLimit }
                switch status {
                case Z_STREAM_END:
                    let position = consumed - Int(stream.pointee.avail_in)
                    // A gzip body may hold several members (RFC 1952 §2.2); anything else after the
                    // end is ignored, as browsers do.
                    guard format == .gzip else { return .complete }
                    if position == input.count || (position == input.count - 1 && input[position] == 0x1F) {
                        heldByte = position < input.count ? input[position] : nil
                        stream.pointee.avail_in = 0
                        memberEnded = true
                        return nil
                    }
                    guard input.count - position >= 2, input[position] == 0x1F, input[position + 1] == 0x8B,
                          inflateReset(stream) == Z_OK else { return .complete }
                case Z_OK:
                    if stream.pointee.avail_in == 0 && consumed == input.count && stream.pointee.avail_out > 0 {
                        return nil
                    }
                case Z_BUF_ERROR:
                    // No progress was possible: with output room left, that means the input ran out.
                    return nil
                default:
                    return .corrupt
                }
            }
        }
    }

    func finish() -> ContentDecoder.End {
        memberEnded ? .complete : .inputEnded
    }
}
