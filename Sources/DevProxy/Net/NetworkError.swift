import Foundation

/// Why a network operation failed, in the words a 502/504 body and a flow record use.
public struct NetworkError: Error, CustomStringConvertible, Sendable {
    public enum Kind: String, Sendable {
        case refused, unresolvable, timedOut = "timed_out", reset, closed, failed
        /// The destination is one the proxy never dials (`ProxyConfiguration.forbiddenDestinations`).
        case forbidden
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    static func from(errno code: Int32, connectingTo target: String?) -> NetworkError {
        let what = String(cString: strerror(code))
        let suffix = target.map { " (\($0))" } ?? ""
        switch code {
        case ECONNREFUSED: return NetworkError(.refused, "connection refused\(suffix)")
        case EAGAIN, ETIMEDOUT: return NetworkError(.timedOut, "timed out\(suffix)")
        case ECONNRESET, EPIPE: return NetworkError(.reset, "connection reset by peer\(suffix)")
        case ENETUNREACH, EHOSTUNREACH: return NetworkError(.refused, "\(what)\(suffix)")
        default: return NetworkError(.failed, "\(what)\(suffix)")
        }
    }
}

extension Error {
    /// Whether this is a `NetworkError` of kind `.timedOut`.
    var isNetworkTimeout: Bool { (self as? NetworkError)?.kind == .timedOut }
}
