/// A host as a URI's authority writes it (RFC 3986 §3.2.2): an IPv6 literal in brackets, a
/// name or an IPv4 address as it is.
///
/// An IPv6 literal "is distinguished by enclosing the IP literal within square brackets"; a
/// name or an IPv4 address has no colon, so anything with one is taken for IPv6. A host
/// already in brackets (`URLComponents.host` keeps them) is left alone, not bracketed twice.
/// A zone id (`fe80::1%eth0`) is bracketed as it is, its `%` not encoded as RFC 6874's `%25`:
/// most of these authorities are shown, sent as `Host` or used as keys; a caller that builds a
/// URL for Foundation to parse percent-encodes the result (`ReplayTarget`), as Foundation traps
/// on a bare `%` in a host.
public enum URIHost {
    /// `example.com`, `203.0.113.5`, `[::1]` (from `::1` or `[::1]`).
    public static func bracketed(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// `example.com:8080`, `[::1]:8080`; without `:port` when `port` is nil.
    public static func authority(host: String, port: Int?) -> String {
        bracketed(host) + (port.map { ":\($0)" } ?? "")
    }
}
