import CCompression

/// One brotli decoder: owns a `BrotliDecoderState` and destroys it in `deinit`.
final class BrotliInflater {
    private let state: OpaquePointer

    /// - Returns: `nil` when the decoder cannot allocate its state.
    init?() {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { return nil }
        self.state = state
    }

    deinit { BrotliDecoderDestroyInstance(state) }

    /// Decodes all of `input`, producing at most `limit` bytes. Use once per instance.
    func inflate(_ input: [UInt8], limit: Int) -> ContentDecoder.Output {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let end: ContentDecoder.End = input.withUnsafeBufferPointer { source in
            var availableIn = source.count
            var nextIn = source.baseAddress
            while true {
                let room = min(chunk.count, limit - output.count)
                guard room > 0 else { return .outputLimit }
                var availableOut = room
                let result = chunk.withUnsafeMutableBufferPointer { target in
                    var nextOut = target.baseAddress
                    return BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                }
                output.append(contentsOf: chunk[0..<(room - availableOut)])
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS: return .complete
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
                // The decoder pushes out what it has before asking for more, so this is a clean prefix.
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: return .inputEnded
                default: return .corrupt
                }
            }
        }
        return ContentDecoder.Output(bytes: output, end: end)
    }
}
