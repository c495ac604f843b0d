/// The REP field of a SOCKS5 reply (RFC 1928 §6).
public enum SOCKS5Reply: UInt8, Sendable, CaseIterable {
    /// X'00' succeeded.
    case succeeded = 0x00
    /// X'01' general SOCKS server failure: also the answer to a malformed request.
    case generalFailure = 0x01
    /// X'02' connection not allowed by ruleset.
    case notAllowed = 0x02
    /// X'03' network unreachable.
    case networkUnreachable = 0x03
    /// X'04' host unreachable: also the answer when the name does not resolve.
    case hostUnreachable = 0x04
    /// X'05' connection refused.
    case connectionRefused = 0x05
    /// X'06' TTL expired: the answer when the connection attempt timed out.
    case ttlExpired = 0x06
    /// X'07' command not supported: BIND and UDP ASSOCIATE here.
    case commandNotSupported = 0x07
    /// X'08' address type not supported.
    case addressTypeNotSupported = 0x08

    /// The reply to send when connecting to the target failed with `errno`.
    ///
    /// - Parameter code: the `errno` of a failed `connect()` (`ECONNREFUSED`, `ENETUNREACH`, …).
    public init(connectErrno code: Int32) {
        switch code {
        case SystemErrno.connectionRefused: self = .connectionRefused
        case SystemErrno.networkUnreachable, SystemErrno.networkDown: self = .networkUnreachable
        case SystemErrno.hostUnreachable, SystemErrno.hostDown: self = .hostUnreachable
        case SystemErrno.timedOut: self = .ttlExpired
        case SystemErrno.permissionDenied, SystemErrno.notPermitted: self = .notAllowed
        default: self = .generalFailure
        }
    }
}

/// The `errno` values `SOCKS5Reply(connectErrno:)` maps, without importing the C library into
/// a target that needs nothing else from it.
enum SystemErrno {
    static let notPermitted: Int32 = 1      // EPERM
    static let permissionDenied: Int32 = 13 // EACCES
    #if os(Linux)
    static let networkDown: Int32 = 100        // ENETDOWN
    static let networkUnreachable: Int32 = 101 // ENETUNREACH
    static let timedOut: Int32 = 110           // ETIMEDOUT
    static let connectionRefused: Int32 = 111  // ECONNREFUSED
    static let hostDown: Int32 = 112           // EHOSTDOWN
    static let hostUnreachable: Int32 = 113    // EHOSTUNREACH
    #else
    static let networkDown: Int32 = 50         // ENETDOWN (BSD numbering, macOS)
    static let networkUnreachable: Int32 = 51  // ENETUNREACH
    static let timedOut: Int32 = 60            // ETIMEDOUT
    static let connectionRefused: Int32 = 61   // ECONNREFUSED
    static let hostDown: Int32 = 64            // EHOSTDOWN
    static let hostUnreachable: Int32 = 65     // EHOSTUNREACH
    #endif
}
