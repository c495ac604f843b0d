/// Why an `HTTP2Session` call failed.
///
/// `code` is closed and small; `reason` says what happened in words; `libraryError` is
/// libnghttp2's own code (negative `nghttp2_error`) when the failure came from the library.
public struct HTTP2Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure. A struct so that kinds can be added without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The session cannot go on (flood detected, bad client preface, out of memory…). Send what
        /// `pendingOutput()` still returns (a GOAWAY when one could be queued), then close.
        public static let sessionFailed = Code("sessionFailed")
        /// A field given to a `submit…` call cannot be sent (CR/LF/NUL, empty or malformed name,
        /// connection-specific field).
        public static let invalidField = Code("invalidField")
        /// The library refused the submission (stream closed or unknown, GOAWAY already sent,
        /// no more stream ids, wrong role…).
        public static let submitRefused = Code("submitRefused")
        /// The call makes no sense in this stream's state (data after the end of the stream,
        /// trailers twice).
        public static let invalidState = Code("invalidState")

        public var description: String { name }
    }

    public let code: Code
    public let reason: String
    /// libnghttp2's error code (`NGHTTP2_ERR_…`, negative), when the library reported the failure.
    public let libraryError: Int32?

    public init(_ code: Code, _ reason: String, libraryError: Int32? = nil) {
        self.code = code
        self.reason = reason
        self.libraryError = libraryError
    }

    public var description: String {
        libraryError.map { "\(code): \(reason) (nghttp2 \($0))" } ?? "\(code): \(reason)"
    }
}
