/// The bounds a parser enforces so that a peer cannot make it buffer without end.
///
/// Defaults:
/// - `maxStartLineLength` 8192 bytes (8 KiB), CRLF excluded. Over it: 414 for a request line,
///   502 for a status line.
/// - `maxHeaderBlockSize` 65536 bytes (64 KiB): every field line plus the empty line that ends
///   the section, CRLFs included, start line excluded. Over it: 431.
/// - `maxHeaderCount` 256 field lines. Over it: 431.
/// - `maxChunkSizeDigits` 16 hex digits, leading zeros included: enough for any 64-bit size.
///   Over it, or a value that overflows 64 bits: 400.
/// - `maxChunkExtensionLength` 4096 bytes (4 KiB): everything between the chunk size and CRLF. Over it: 400.
/// - `maxTrailerBlockSize` 16384 bytes (16 KiB), counted like the header block. Over it: 431.
/// - `maxTrailerCount` 64 field lines. Over it: 431.
///
/// Every status above becomes 502 when the parser reads responses.
public struct HTTP1Limits: Sendable, Equatable {
    /// Longest request line or status line, without its CRLF. Default 8192.
    public var maxStartLineLength: Int
    /// Largest header section in bytes, field lines and final empty line with their CRLFs. Default 65536.
    public var maxHeaderBlockSize: Int
    /// Most field lines in a header section. Default 256.
    public var maxHeaderCount: Int
    /// Most hex digits in a chunk size, leading zeros included. Default 16.
    public var maxChunkSizeDigits: Int
    /// Longest chunk extension: the bytes after the chunk size up to its CRLF. Default 4096.
    public var maxChunkExtensionLength: Int
    /// Largest trailer section in bytes, counted like the header block. Default 16384.
    public var maxTrailerBlockSize: Int
    /// Most field lines in a trailer section. Default 64.
    public var maxTrailerCount: Int

    /// Creates limits; every argument defaults to the value stated on the type.
    public init(
        maxStartLineLength: Int = 8192,
        maxHeaderBlockSize: Int = 65536,
        maxHeaderCount: Int = 256,
        maxChunkSizeDigits: Int = 16,
        maxChunkExtensionLength: Int = 4096,
        maxTrailerBlockSize: Int = 16384,
        maxTrailerCount: Int = 64
    ) {
        self.maxStartLineLength = maxStartLineLength
        self.maxHeaderBlockSize = maxHeaderBlockSize
        self.maxHeaderCount = maxHeaderCount
        self.maxChunkSizeDigits = maxChunkSizeDigits
        self.maxChunkExtensionLength = maxChunkExtensionLength
        self.maxTrailerBlockSize = maxTrailerBlockSize
        self.maxTrailerCount = maxTrailerCount
    }

    /// The defaults stated on the type.
    public static let `default` = HTTP1Limits()
}
