/// Finds CRLF-terminated lines at the front of an `InputBuffer` without rescanning bytes already seen.
///
/// RFC 9112 §2.2 lets a recipient accept a bare LF as a line terminator. This codec does not: a
/// proxy and the server behind it that disagree on where a line ends is how requests get
/// smuggled, so a bare LF is an error, as is a CR not followed by LF.
struct LineScanner: Sendable {
    /// Bytes at the front of the buffer already known to hold no LF.
    private var scanned = 0

    /// The outcome of looking for a line.
    enum Scan {
        /// A complete line of `length` bytes before its CRLF; `length + 2` bytes make up the line.
        case line(length: Int)
        /// No LF yet; `pending` bytes are buffered for the line so far.
        case incomplete(pending: Int)
        /// An LF not preceded by CR after `pending` bytes. The caller checks those bytes as it
        /// checks `.incomplete`'s, then refuses the line (`LineScanner.bareLF`): a line already
        /// over its limit before the LF is too long, as it is while the LF has not arrived, so the
        /// verdict does not depend on where reads fall.
        case bareLF(pending: Int)
    }

    /// Looks for the next line at the front of `buffer`.
    mutating func scan(_ buffer: InputBuffer) -> Scan {
        guard let lf = buffer.firstOffset(of: ASCII.lf, from: scanned) else {
            scanned = buffer.count
            return .incomplete(pending: buffer.count)
        }
        scanned = 0
        guard lf > 0, buffer[lf - 1] == ASCII.cr else { return .bareLF(pending: lf) }
        return .line(length: lf - 1)
    }

    /// The refusal of a line (`what`) that `.bareLF` ended.
    static func bareLF(_ what: String, side: MessageSide) -> HTTP1ParseError {
        HTTP1ParseError(.bareLF, "\(what) ends in a bare LF without CR", side: side)
    }
}
