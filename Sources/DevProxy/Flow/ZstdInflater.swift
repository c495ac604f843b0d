import CCompression

/// One zstd decoder: owns a `ZSTD_DCtx` and frees it in `deinit`.
///
/// Decodes concatenated frames as one body (RFC 8878 §3.1: "a compressed stream may contain
/// several frames"), skips skippable frames, and accepts frames that do not state their size.
final class ZstdInflater {
    /// The largest window a frame may ask for: 8 MiB. RFC 9659 limits the `zstd` content coding to
    /// windows of 8 MB (encoders must stay within it; decoders need not accept more, and browsers
    /// do not), and the window is memory the decoder allocates up front, so a hostile frame
    /// cannot make it reserve more.
    static let windowLogMax: Int32 = 23

    private let context: OpaquePointer

    /// - Returns: `nil` when zstd cannot allocate its context.
    init?() {
        guard let context = ZSTD_createDCtx() else { return nil }
        self.context = context
        guard ZSTD_isError(ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Self.windowLogMax)) == 0 else {
            ZSTD_freeDCtx(context)
            return nil
        }
    }

    deinit { ZSTD_freeDCtx(context) }

    /// Decodes all of `input`, producing at most `limit` bytes. Use once per instance.
    func inflate(_ input: [UInt8], limit: Int) -> ContentDecoder.Output {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let end: ContentDecoder.End = input.withUnsafeBytes { source in
            var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            while true {
                let room = min(chunk.count, limit - output.count)
                guard room > 0 else { return .outputLimit }
                let (result, produced) = chunk.withUnsafeMutableBytes { target in
                    var outBuffer = ZSTD_outBuffer(dst: target.baseAddress, size: room, pos: 0)
                    let result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
                    return (result, outBuffer.pos)
                }
                output.append(contentsOf: chunk[0..<produced])
                if ZSTD_isError(result) != 0 { return .corrupt }
                let inputLeft = inBuffer.pos < inBuffer.size
                // 0: a frame ended and is fully flushed; the next bytes, if any, start another frame.
                if result == 0 {
                    if !inputLeft { return .complete }
                    continue
                }
                // Mid-frame with all input taken and output room left over: the input was cut short.
                if !inputLeft && produced < room { return .inputEnded }
            }
        }
        return ContentDecoder.Output(bytes: output, end: end)
    }
}
