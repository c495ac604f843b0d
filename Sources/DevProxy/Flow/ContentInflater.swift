/// One content coding's decoder, fed a body a piece at a time (`ZlibInflater`, `BrotliInflater`,
/// `ZstdInflater`): the one-shot `inflate` and `ContentDecodingStream` are both built on it.
protocol ContentInflater: AnyObject {
    /// Decodes `input`, the next piece of the coded body, handing decoded pieces (at most 64 KiB
    /// each) to `emit`, which returns false to stop.
    /// - Returns: nil when all of `input` was taken and the coded stream goes on; otherwise why
    ///   decoding stopped (`.outputLimit` when `emit` asked to stop). Feed no more after that.
    func decode(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Bool) -> ContentDecoder.End?

    /// Why decoding stops when the input ends here (after `decode` returned nil each time):
    /// `.complete` when the coded stream ended too, `.inputEnded` when it was cut short.
    func finish() -> ContentDecoder.End
}

extension ContentInflater {
    /// Decodes all of `input`, producing at most `limit` bytes. Use once per instance.
    func inflate(_ input: [UInt8], limit: Int) -> ContentDecoder.Output {
        var output: [UInt8] = []
        var produced = 0
        let stopped = input.withUnsafeBytes { source in
            decode(source) { piece in
                // One piece past the limit is decoded to learn that there is more than the limit.
                produced += piece.count
                output.append(contentsOf: piece.prefix(max(0, limit - output.count)))
                return produced <= limit
            }
        }
        return ContentDecoder.Output(bytes: output, end: stopped ?? finish())
    }
}

extension ContentDecoder {
    /// A decoder for `coding`, given the body's first bytes (`deflate` comes zlib-wrapped or raw).
    static func inflater(for coding: ContentCoding, startingWith start: UnsafeRawBufferPointer)
        -> (any ContentInflater)? {
        switch coding {
        case .gzip:
            return ZlibInflater(format: .gzip)
        case .deflate:
            // "deflate" is meant to be zlib-wrapped (RFC 9110 §8.4.1.2), but some servers send raw
            // DEFLATE and browsers accept both; a zlib header is recognisable by its checksum.
            let wrapped = start.count >= 2 && start[0] & 0x0F == 8
                && (UInt16(start[0]) << 8 | UInt16(start[1])) % 31 == 0
            return ZlibInflater(format: wrapped ? .zlib : .raw)
        case .br:
            return BrotliInflater()
        case .zstd:
            return ZstdInflater()
        }
    }
}
