/// What went wrong in the session store: a closed `code`, a human `reason`.
///
/// Filter expressions have their own error, `FilterSyntaxError`, which carries a column.
public struct SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure, closed so callers can switch on them.
    public enum Code: String, Sendable {
        /// The file could not be created or opened.
        case open
        /// SQLite refused a statement (the reason carries its message and result code).
        case sqlite
        /// The file's schema is newer than this build knows, or not a session store.
        case schema
        /// An imported file is not a flow log or a HAR document.
        case importFormat
        /// The store was closed.
        case closed
        /// A body kept as a file beside the session (`PATH-bodies/`) is missing or unreadable.
        case bodyFile
        /// Another process is writing to the session (`SessionLock`).
        case inUse
        /// A filter's regular expression searched longer than `MatchFunctions.budget` and was stopped.
        case filterTimedOut
        /// A flow's mark or comment cannot be kept: the session file is not writable, or the
        /// comment is too long (`FlowNote`).
        case note
    }

    public var code: Code
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }
}
