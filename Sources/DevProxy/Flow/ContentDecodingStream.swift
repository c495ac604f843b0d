/// Undoes a body's content codings (gzip, deflate, br, zstd, chained as `Content-Encoding` lists
/// them) a piece at a time, with a bound on the output: a body too large to hold decoded in memory
/// is read, decoded and passed on in pieces (the web UI's decoded body route).
///
/// Ends like `ContentDecoder`: a truncated or damaged input yields what decoded before the end or
/// the damage. Feed pieces with `write` until it returns false or the input ends, then `finish`.
public final class ContentDecodingStream {
    /// The codings in decoding order (the last one applied first).
    private let codings: [ContentCoding]
    /// Each coding's decoder, made when its first bytes arrive (deflate's framing is read from them).
    private var stages: [(any ContentInflater)?]
    /// Why a stage stopped on its own (its stream ended or broke).
    private var stageEnds: [ContentDecoder.End?]
    /// A stage's first byte while it waits for a second (see `feed`).
    private var heads: [[UInt8]]
    private var stopped = false
    private var overflowed = false
    /// The most decoded bytes passed on; past it decoding stops with `.outputLimit`.
    public let outputLimit: Int
    /// Decoded bytes passed on so far.
    public private(set) var produced = 0
    /// Why decoding stopped, once `write` returned false or `finish` was called.
    public private(set) var end: ContentDecoder.End?

    /// - Returns: nil when `contentEncoding` names no coding or one this decoder does not know.
    public init?(contentEncoding: String?, outputLimit: Int) {
        guard let codings = ContentCoding.list(fromHeader: contentEncoding), !codings.isEmpty else { return nil }
        self.codings = codings.reversed()
        stages = Array(repeating: nil, count: codings.count)
        stageEnds = Array(repeating: nil, count: codings.count)
        heads = Array(repeating: [], count: codings.count)
        self.outputLimit = max(0, outputLimit)
    }

    /// Decodes `input`, the next piece of the coded body, passing the decoded bytes to `emit`.
    /// - Returns: false once decoding has stopped (the coded stream ended or broke, or the output
    ///   reached `outputLimit`): feed no more, `end` says why.
    @discardableResult
    public func write(_ input: UnsafeRawBufferPointer, emit: (UnsafeRawBufferPointer) -> Void) -> Bool {
        guard end == nil else { return false }
        if !feed(input, stage: 0, emit: emit) || stopped { _ = finish() }
        return end == nil
    }

    /// Says the input ended; returns why decoding stopped (also kept in `end`).
    @discardableResult
    public func finish() -> ContentDecoder.End {
        if let end { return end }
        var result = ContentDecoder.End.complete
        // A stage that stopped the stream decides for those before it (which were cut off by it).
        let last = stageEnds.lastIndex { $0 != nil } ?? 0
        for index in last..<stages.count {
            result = result.worse(stageEnds[index] ?? stages[index]?.finish() ?? .inputEnded)
        }
        let end = overflowed ? .outputLimit : result
        self.end = end
        return end
    }

    /// Feeds `input` to stage `index` (past the last stage: the output); false once the stream stopped.
    private func feed(_ input: UnsafeRawBufferPointer, stage index: Int, emit: (UnsafeRawBufferPointer) -> Void)
        -> Bool {
        guard !stopped else { return false }
        guard index < codings.count else {
            let room = outputLimit - produced
            let count = min(room, input.count)
            if count > 0 { emit(UnsafeRawBufferPointer(start: input.baseAddress, count: count)) }
            produced += count
            if input.count > room {
                overflowed = true
                stopped = true
            }
            return !stopped
        }
        guard !input.isEmpty else { return true }
        if stages[index] == nil {
            // deflate's framing shows in its first two bytes: a one-byte first piece waits for the next.
            if codings[index] == .deflate && (!heads[index].isEmpty || input.count < 2) {
                heads[index] += input
                guard heads[index].count >= 2 else { return true }
                let head = heads[index]
                heads[index] = []
                return head.withUnsafeBytes { feed($0, stage: index, emit: emit) }
            }
            guard let made = ContentDecoder.inflater(for: codings[index], startingWith: input) else {
                stageEnds[index] = .corrupt
                stopped = true
                return false
            }
            stages[index] = made
        }
        // Taken out first: decoding calls back into `feed` for the next stage, which may set `stages`.
        guard let stage = stages[index] else { return false }
        guard let stageEnd = stage.decode(input, emit: { feed($0, stage: index + 1, emit: emit) }) else {
            return true
        }
        // `.outputLimit` here means a later stage stopped the stream; that stage's end counts.
        if !stopped {
            stageEnds[index] = stageEnd
            stopped = true
        }
        return false
    }
}
