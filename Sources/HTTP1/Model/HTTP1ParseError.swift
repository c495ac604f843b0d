/// Why a request or response could not be parsed, and the status a proxy should answer with.
///
/// `status` is the response to send for a bad request (400, 414, 431, 501, 505) and always 502
/// when the bad message was a response from upstream. After a parser throws, it throws the same
/// error on every later call: the connection cannot be trusted to be in sync any more.
public struct HTTP1ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem was found. `reason` says exactly what.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Request line or status line over `maxStartLineLength` (414).
        case startLineTooLong
        /// Header section over `maxHeaderBlockSize` (431).
        case headerBlockTooLarge
        /// More than `maxHeaderCount` field lines (431).
        case tooManyHeaders
        /// Start line not shaped `method SP target SP version` / `version SP status SP reason` (400).
        case malformedStartLine
        /// Request line with no HTTP-version, as in HTTP/0.9 (400).
        case missingVersion
        /// Version not of the form `HTTP/d.d` (400).
        case malformedVersion
        /// Well-formed version other than 1.0 or 1.1 (505).
        case unsupportedVersion
        /// Method is not a token (400).
        case invalidMethod
        /// Request target fits none of the forms allowed for its method (400).
        case invalidTarget
        /// Status code is not three digits from 100 to 999 (502).
        case invalidStatusCode
        /// A field line starts with SP or HTAB: obs-fold, or whitespace after the start line (400).
        case obsoleteLineFolding
        /// Whitespace between a field name and its colon (400).
        case whitespaceBeforeColon
        /// A field line has no colon (400).
        case missingColon
        /// A field name is empty or holds a non-token character (400).
        case invalidHeaderName
        /// A field value or reason phrase holds a control character (400).
        case invalidHeaderValue
        /// A NUL byte inside a line (400).
        case nulCharacter
        /// A CR not followed by LF (400).
        case bareCR
        /// A line ended by LF alone (400).
        case bareLF
        /// Both Content-Length and Transfer-Encoding (400).
        case contentLengthWithTransferEncoding
        /// Several Content-Length values that differ (400).
        case conflictingContentLength
        /// Content-Length that is not a decimal number fitting 64 bits (400).
        case invalidContentLength
        /// Transfer-Encoding in a request whose final coding is not chunked (400).
        case transferEncodingNotChunked
        /// Transfer-Encoding empty, or chunked applied twice (400).
        case invalidTransferEncoding
        /// Transfer coding this codec does not know (501).
        case unknownTransferCoding
        /// Transfer-Encoding in an HTTP/1.0 message, whose framing RFC 9112 §6.1 calls faulty (400).
        case transferEncodingInHTTP10
        /// Chunk size not hexadecimal, or negative (400).
        case invalidChunkSize
        /// Chunk size with too many digits or over 64 bits (400).
        case chunkSizeTooLarge
        /// Chunk extension over `maxChunkExtensionLength` (400).
        case chunkExtensionTooLong
        /// Chunk extension not of the form `;name[=value]` (400).
        case invalidChunkExtension
        /// Chunk data not followed by CRLF (400).
        case missingChunkDataCRLF
        /// Trailer section over `maxTrailerBlockSize` (431).
        case trailerBlockTooLarge
        /// More than `maxTrailerCount` trailer fields (431).
        case tooManyTrailers
        /// The connection closed before the message was complete (400).
        case truncated
        /// A response arrived with no request waiting for it (502).
        case unexpectedResponse
        /// The peer answered with HTTP/2 frames (a SETTINGS frame where a status line belongs): it
        /// speaks only HTTP/2, as an h2c server (a plaintext gRPC server) does (502).
        case http2Frames
        /// A TLS handshake record where a request line belongs: a client speaking TLS to a
        /// plain-HTTP port (one set to use `https://` for a proxy that speaks HTTP) (400).
        case tlsHandshake
        /// A SOCKS greeting (version 4 or 5) where a request line belongs: a client set to use
        /// this HTTP port as a SOCKS proxy (400).
        case socksGreeting

        /// The status a proxy answers a bad request with.
        public var requestStatus: Int {
            switch self {
            case .startLineTooLong: 414
            case .headerBlockTooLarge, .tooManyHeaders, .trailerBlockTooLarge, .tooManyTrailers: 431
            case .unknownTransferCoding: 501
            case .unsupportedVersion: 505
            case .invalidStatusCode, .unexpectedResponse, .http2Frames: 502
            default: 400
            }
        }
    }

    /// What kind of problem was found.
    public let code: Code
    /// The status to answer with: the request status of `code`, or 502 for responses.
    public let status: Int
    /// One line saying exactly what was wrong, e.g. "chunk size is not hexadecimal".
    public let reason: String

    /// Creates an error with an explicit status.
    public init(code: Code, status: Int, reason: String) {
        self.code = code
        self.status = status
        self.reason = reason
    }

    /// Creates an error for a message read from `side`: a request gets `code`'s status, a response 502.
    init(_ code: Code, _ reason: String, side: MessageSide) {
        self.init(code: code, status: side == .request ? code.requestStatus : 502, reason: reason)
    }

    /// `status code: reason`, e.g. `400 invalidChunkSize: chunk size is not hexadecimal`.
    public var description: String { "\(status) \(code.rawValue): \(reason)" }
}

/// Which kind of message a parser reads; it picks error statuses and the message-length rules.
enum MessageSide: Sendable {
    case request
    case response
}
