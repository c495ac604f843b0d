/// An HTTP version as it appears in a start line, `HTTP/major.minor`.
public struct HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    /// The major version digit.
    public var major: Int
    /// The minor version digit.
    public var minor: Int

    /// Creates a version from its two digits.
    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.1, the version this codec speaks.
    public static let http11 = HTTPVersion(major: 1, minor: 1)
    /// HTTP/1.0, still accepted from peers.
    public static let http10 = HTTPVersion(major: 1, minor: 0)

    /// The version as written on the wire, e.g. `HTTP/1.1`.
    public var description: String {
        // Asked for twice per proxied exchange (flow records); the two real versions need no
        // formatting.
        switch (major, minor) {
        case (1, 1): return "HTTP/1.1"
        case (1, 0): return "HTTP/1.0"
        default: return "HTTP/\(major).\(minor)"
        }
    }
}
