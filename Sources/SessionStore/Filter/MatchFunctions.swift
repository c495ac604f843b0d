import CSQLite
import Foundation

/// The SQL functions compiled filters call: `regexp(pattern, value)` and
/// `regexp_lines(pattern, value)` (the same, with `^`/`$` at line breaks, for header blocks), and
/// `base64_blob(text)`: the bytes a base64 text stands for (a binary WebSocket message, which the
/// record keeps as base64), NULL for NULL or text that is not base64.
///
/// A NULL value matches nothing (never NULL, so `NOT regexp(…)` is true for a missing field).
/// TEXT is searched as UTF-8; a BLOB (a binary body) as bytes. Patterns are compiled once per
/// connection (`PatternCache`) and attached to the running statement as SQLite auxiliary data,
/// so the rows after the first find theirs without a string or a dictionary look-up.
///
/// A statement's pattern has `budget` to search all its rows: past it, the function fails with
/// `timeoutMessage`, which ends the statement (`SessionStoreError.Code.filterTimedOut`). One
/// filter that backtracks without end held the store's readers, so the web UI answered nothing
/// more and the process ignored Ctrl-C.
enum MatchFunctions {
    /// How long one statement's regular expression may search, over all its rows.
    static let budget: Duration = .seconds(10)
    /// The error a statement ends with when its pattern ran out of `budget`.
    static let timeoutMessage = "the filter's regular expression searched for more than 10 s and was stopped: ICU "
        + "backtracks without end on some patterns (alternatives or several .* under a repetition) against long "
        + "text; narrow it first (~d, ~t) or write it with fewer repetitions"

    /// Registers both functions on `database`.
    static func register(on database: SQLiteDatabase) throws {
        try database.createFunction("regexp", arguments: 2, context: PatternCache(lines: false), call)
        try database.createFunction("regexp_lines", arguments: 2, context: PatternCache(lines: true), call)
        try database.createFunction("base64_blob", arguments: 1, context: NSObject(), callBase64)
    }

    private static let callBase64: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard let context, count == 1, let arguments, let value = arguments[0], sqlite3_value_type(value) == SQLITE_TEXT,
              let text = sqlite3_value_text(value),
              let bytes = Data(base64Encoded: Data(bytes: text, count: Int(sqlite3_value_bytes(value)))) else {
            if let context { sqlite3_result_null(context) }
            return
        }
        bytes.withUnsafeBytes { buffer in
            sqlite3_result_blob64(context, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, UInt64(buffer.count),
                                  CSQLite_SQLITE_TRANSIENT())
        }
    }

    /// The C entry point for both functions; the cache says which one it is.
    private static let call: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard let context, count == 2, let arguments, let patternValue = arguments[0], let value = arguments[1] else {
            return
        }
        let running: RunningPattern
        if let compiled = sqlite3_get_auxdata(context, 0) {
            // The same bound pattern as the previous row: SQLite kept our compiled one.
            running = Unmanaged<RunningPattern>.fromOpaque(compiled).takeUnretainedValue()
        } else {
            let cache = Unmanaged<PatternCache>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
            guard let patternText = sqlite3_value_text(patternValue) else {
                sqlite3_result_int(context, 0)
                return
            }
            do {
                running = RunningPattern(try cache.pattern(String(cString: patternText)),
                                         deadline: ContinuousClock.now + budget)
            } catch {
                sqlite3_result_error(context, "invalid regular expression", -1)
                return
            }
            sqlite3_set_auxdata(context, 0, Unmanaged.passRetained(running).toOpaque(), releasePattern)
        }
        let matched: Bool?
        switch sqlite3_value_type(value) {
        case SQLITE_NULL:
            matched = false
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(value)
            let size = bytes == nil ? 0 : Int(sqlite3_value_bytes(value))
            matched = running.pattern.matches(UnsafeRawBufferPointer(start: bytes, count: size), until: running.deadline)
        default:
            // Text (a number would be converted to text): its UTF-8 bytes, NULs and all.
            let text = sqlite3_value_text(value)
            let size = text == nil ? 0 : Int(sqlite3_value_bytes(value))
            matched = running.pattern.matches(UnsafeRawBufferPointer(start: text, count: size), until: running.deadline)
        }
        guard let matched, ContinuousClock.now <= running.deadline else {
            sqlite3_result_error(context, timeoutMessage, -1)
            return
        }
        sqlite3_result_int(context, matched ? 1 : 0)
    }
}

/// A statement's compiled pattern and when its search time runs out (`MatchFunctions.budget`,
/// counted from the statement's first row). Per statement, where the compiled pattern is shared
/// by the connection's statements (`PatternCache`).
private final class RunningPattern {
    let pattern: TextPattern
    let deadline: ContinuousClock.Instant

    init(_ pattern: TextPattern, deadline: ContinuousClock.Instant) {
        self.pattern = pattern
        self.deadline = deadline
    }
}

/// Releases the reference `call` handed to `sqlite3_set_auxdata`.
private let releasePattern: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    guard let pointer else { return }
    Unmanaged<RunningPattern>.fromOpaque(pointer).release()
}
