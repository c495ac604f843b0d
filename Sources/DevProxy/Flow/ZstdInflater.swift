import CCompression

/// One zstd decoder: owns a `ZSTD_DCtx` and frees it in `deinit`.
///
/// Decodes concatenated frames as one body (RFC 8878 §3.1: "a compressed stream may contain
/// several frames"), skips skippable frames, and accepts frames that do not state their size.
final class ZstdInflater: ContentInflater {
    /// The largest window a frame may ask for: 8 MiB. RFC 9659 limits the `zstd` content coding to
    /// windows of 8 MB (encoders must stay within it; decoders need not accept more, and browsers
    /// do not), and the window is memory the decoder allocates up front, so a hostile frame
    /// cannot make it reserve more.
    static let windowLogMax: Int32 = 23

    private let context: OpaquePointer
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    /// The last piece ended exactly at the end of a frame.
    private var atFrameEnd = false

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

    /// Decodes `input`, the next piece of the body (see `ContentInflater`).
    func decode(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Bool) -> ContentDecoder.End? {
        guard !input.isEmpty else { return nil }
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        return chunk.withUnsafeMutableBytes { target in
            while true {
                var outBuffer = ZSTD_outBuffer(dst: target.baseAddress, size: target.count, pos: 0)
                let result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
                let produced = outBuffer.pos
                let piece = UnsafeRawBufferPointer(start: target.baseAddress, count: produced)
                if produced > 0 && !emit(piece) { return .outputLimit }
                if ZSTD_isError(result) != 0 { return .corrupt }
                let inputLeft = inBuffer.pos < inBuffer.size
                // 0: a frame ended and is fully flushed; the next bytes, if any, start another frame.
                atFrameEnd = result == 0
                if atFrameEnd {
                    if !inputLeft { return nil }
                    continue
                }
                // Mid-frame with all input taken and output room left over: the frame needs more input.
                if !inputLeft && produced < target.count { return nil }
            }
        }
    }

    func finish() -> ContentDecoder.End {
        atFrameEnd ? .complete : .inputEnded
    }
}
