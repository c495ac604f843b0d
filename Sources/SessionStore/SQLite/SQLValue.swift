/// A value bound to a statement parameter or read from a column.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    /// Text given as the first `count` bytes of UTF-8 (not copied into a `String` first).
    case utf8([UInt8], count: Int)
    case blob([UInt8])
    /// A blob of this many zero bytes, not held in memory: filled in later through `SQLiteBlob`.
    case zeroBlob(Int)

    /// `.integer` for a present `Int`, `.null` otherwise.
    static func int(_ value: Int?) -> SQLValue { value.map { .integer(Int64($0)) } ?? .null }
    /// `.text` for a present string, `.null` otherwise.
    static func string(_ value: String?) -> SQLValue { value.map { .text($0) } ?? .null }
    /// `.real` for a present double, `.null` otherwise.
    static func double(_ value: Double?) -> SQLValue { value.map { .real($0) } ?? .null }
    /// 1 or 0.
    static func bool(_ value: Bool) -> SQLValue { .integer(value ? 1 : 0) }
}
