import CCompression

/// One zlib inflate stream: owns a `z_stream` and ends it in `deinit`.
final class ZlibInflater {
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

    /// - Returns: `nil` when zlib cannot allocate its state.
    init?(format: Format) {
        self.format = format
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

    /// Inflates all of `input`, producing at most `limit` bytes. Use once per instance.
    func inflate(_ input: [UInt8], limit: Int) -> ContentDecoder.Output {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let end: ContentDecoder.End = input.withUnsafeBufferPointer { source in
            var consumed = 0
            while true {
                if stream.pointee.avail_in == 0 {
                    // avail_in is 32 bits wide; feed very large inputs in slices.
                    let slice = min(source.count - consumed, Int(UInt32.max))
                    stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress.map { $0 + consumed })
                    stream.pointee.avail_in = UInt32(slice)
                    consumed += slice
                }
                let room = min(chunk.count, limit - output.count)
                guard room > 0 else { return .outputLimit }
                let status = chunk.withUnsafeMutableBufferPointer { target in
                    stream.pointee.next_out = target.baseAddress
                    stream.pointee.avail_out = UInt32(room)
                    return CCompression.inflate(stream, Z_NO_FLUSH)
                }
                output.append(contentsOf: chunk[0..<(room - Int(stream.pointee.avail_out))])
                switch status {
                case Z_STREAM_END:
                    let remaining = Int(stream.pointee.avail_in) + (source.count - consumed)
                    // A gzip body may hold several members (RFC 1952 §2.2); anything else after the
                    // end is ignored, as browsers do.
                    guard format == .gzip, remaining >= 2, stream.pointee.next_in[0] == 0x1F,
                          stream.pointee.next_in[1] == 0x8B, inflateReset(stream) == Z_OK else { return .complete }
                case Z_OK:
                    if stream.pointee.avail_in == 0 && consumed == source.count && stream.pointee.avail_out > 0 {
                        return .inputEnded
                    }
                case Z_BUF_ERROR:
                    // No progress was possible: with output room left, that means the input ran out.
                    return .inputEnded
                default:
                    return .corrupt
                }
            }
        }
        return ContentDecoder.Output(bytes: output, end: end)
    }
}
