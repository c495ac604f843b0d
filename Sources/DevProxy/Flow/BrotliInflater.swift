import CCompression

/// One brotli decoder: owns a `BrotliDecoderState` and destroys it in `deinit`.
final class BrotliInflater: ContentInflater {
    private let state: OpaquePointer
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    /// - Returns: `nil` when the decoder cannot allocate its state.
    init?() {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { return nil }
        self.state = state
    }

    deinit { BrotliDecoderDestroyInstance(state) }

    /// Decodes `input`, the next piece of the body (see `ContentInflater`).
    func decode(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Bool) -> ContentDecoder.End? {
        guard !input.isEmpty else { return nil }
        var availableIn = input.count
        var nextIn = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        return chunk.withUnsafeMutableBufferPointer { target in
            while true {
                var availableOut = target.count
                var nextOut = target.baseAddress
                let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                let produced = target.count - availableOut
                let piece = UnsafeRawBufferPointer(start: target.baseAddress, count: produced)
                if produced > 0 && !emit(piece) { return .outputLimit }
                switch result {
                // Bytes after the stream's end are not brotli (gzip bytes labelled `br` "decode"
                // to an empty stream that ends within their first bytes): damaged, not complete.
                case BROTLI_DECODER_RESULT_SUCCESS: return availableIn == 0 ? .complete : .corrupt
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
                // The decoder pushes out what it has before asking for more, so this is a clean prefix.
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: return nil
                default: return .corrupt
                }
            }
        }
    }

    func finish() -> ContentDecoder.End {
        .inputEnded
    }
}
