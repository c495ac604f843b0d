/// Why a SOCKS5 handshake ended without a tunnel, and the bytes to write before closing.
public struct SOCKS5Failure: Error, Hashable, Sendable {
    /// What went wrong, as a closed set for counting and tests.
    public enum Kind: Hashable, Sendable {
        /// The greeting's VER was not 5 (a SOCKS4 or HTTP client, perhaps): closed without a reply.
        case unsupportedVersion
        /// The greeting listed no methods, or none the server accepts: method X'FF'.
        case noAcceptableMethods
        /// The RFC 1929 sub-negotiation was not version 1 or had an empty name.
        case malformedAuthentication
        /// The credentials were refused: RFC 1929 status X'01'.
        case authenticationFailed
        /// The request was malformed: wrong VER, non-zero RSV, an empty or unprintable name, port 0.
        case malformedRequest
        /// BIND or UDP ASSOCIATE, or an unknown command: X'07'.
        case unsupportedCommand
        /// An ATYP other than 1, 3 or 4: X'08'.
        case unsupportedAddressType
        /// The client sent more before the tunnel opened than `SOCKS5Configuration` allows.
        case tooMuchEarlyData
        /// Connecting to the target failed; the caller chose the reply.
        case connectFailed
    }

    public let kind: Kind
    /// The REP code sent, for failures of the request stage; nil before it (method selection,
    /// authentication) or when nothing was sent.
    public let reply: SOCKS5Reply?
    /// The bytes to write to the client before closing; empty when the protocol has no answer.
    public let bytes: [UInt8]
    /// A sentence for the flow log: what the client sent or what failed.
    public let reason: String

    public init(kind: Kind, reply: SOCKS5Reply?, bytes: [UInt8], reason: String) {
        self.kind = kind
        self.reply = reply
        self.bytes = bytes
        self.reason = reason
    }
}
