/// Undoes gzip, deflate, br and zstd codings with a bound on the output, so a body can be shown as
/// text. Never fails loudly: a truncated or corrupt input yields what was decodable before the
/// end or the damage.
public enum ContentDecoder {
    /// The most decoded bytes produced for one body: a few MiB of text is all a person or a
    /// HAR viewer reads, and it caps what a decompression bomb can cost.
    public static let defaultOutputLimit = 4 * 1024 * 1024

    /// Decoded bytes and why decoding stopped.
    public struct Output: Sendable, Equatable {
        public var bytes: [UInt8]
        public var end: End

        public init(bytes: [UInt8], end: End) {
            self.bytes = bytes
            self.end = end
        }
    }

    /// Why decoding stopped.
    public enum End: Sendable, Equatable {
        /// The coded stream ended properly.
        case complete
        /// The input ran out before the stream's end: a truncated prefix.
        case inputEnded
        /// The output bound was reached.
        case outputLimit
        /// The input is damaged from some point on (or was never in this coding).
        case corrupt

        /// The worse of two ends, for a chain of codings.
        func worse(_ other: End) -> End {
            let rank: (End) -> Int = { [.complete, .outputLimit, .inputEnded, .corrupt].firstIndex(of: $0)! }
            return rank(other) > rank(self) ? other : self
        }
    }

    /// Decodes `input` from one coding.
    ///
    /// - Returns: the decoded bytes, or `nil` when nothing at all could be decoded from an input
    ///   that is corrupt or ran out before its stream ended (or the decoder could not be
    ///   created). Bytes in another coding can read as the start of a stream that never ends: gzip
    ///   bytes labelled `br` were "decoded" to an empty text.
    public static func decode(_ input: [UInt8], coding: ContentCoding,
                              outputLimit: Int = defaultOutputLimit) -> Output? {
        let output = input.withUnsafeBytes { inflater(for: coding, startingWith: $0) }?
            .inflate(input, limit: outputLimit)
        guard let output, !isNoDecoding(produced: output.bytes.count, end: output.end) else { return nil }
        return output
    }

    /// Whether a decoding that produced `produced` bytes and stopped at `end` is no decoding at
    /// all: nothing came of a stream that did not end. Bytes in another coding can read as the
    /// start of a stream that never ends (gzip labelled `br`); they are shown as sent.
    public static func isNoDecoding(produced: Int, end: End?) -> Bool {
        produced == 0 && end != .complete
    }

    /// Decodes `input` through every coding a `Content-Encoding` value names, last applied first.
    ///
    /// - Returns: `nil` when the value names no coding, an unknown one, or nothing decodes.
    public static func decode(_ input: [UInt8], contentEncoding: String?,
                              outputLimit: Int = defaultOutputLimit) -> Output? {
        guard let codings = ContentCoding.list(fromHeader: contentEncoding), !codings.isEmpty else { return nil }
        var current = Output(bytes: input, end: .complete)
        for coding in codings.reversed() {
            guard let next = decode(current.bytes, coding: coding, outputLimit: outputLimit) else { return nil }
            current = Output(bytes: next.bytes, end: current.end.worse(next.end))
        }
        return current
    }
}
