/// How a SOCKS5 server authenticates clients and how much it buffers; every default stated.
public struct SOCKS5Configuration: Sendable {
    /// Which RFC 1928 §3 method the server requires.
    public enum Authentication: Sendable {
        /// X'00' NO AUTHENTICATION REQUIRED.
        case none
        /// X'02' USERNAME/PASSWORD (RFC 1929): the closure says whether the pair is accepted.
        /// Names and passwords that are not valid UTF-8 are refused without calling it.
        case usernamePassword(@Sendable (_ user: String, _ password: String) -> Bool)
    }

    /// Default `.none`.
    public var authentication: Authentication
    /// Bytes the client may send after its request and before the tunnel opens (an optimistic
    /// TLS ClientHello, for one); they are handed over with `.established`. Default 65 536.
    public var maximumEarlyData: Int

    public init(authentication: Authentication = .none, maximumEarlyData: Int = 65_536) {
        self.authentication = authentication
        self.maximumEarlyData = maximumEarlyData
    }

    /// A server that asks for no credentials.
    public static let noAuthentication = SOCKS5Configuration()

    /// A server that requires RFC 1929 credentials accepted by `check`.
    public static func usernamePassword(_ check: @escaping @Sendable (_ user: String, _ password: String) -> Bool)
        -> SOCKS5Configuration {
        SOCKS5Configuration(authentication: .usernamePassword(check))
    }
}
