/// Where a SOCKS5 client asks to connect (RFC 1928 §4 ATYP and DST.ADDR) or where the server
/// says it is bound (§6 BND.ADDR).
public enum SOCKS5Address: Hashable, Sendable {
    /// ATYP X'01': four bytes in network order.
    case ipv4([UInt8])
    /// ATYP X'04': sixteen bytes in network order.
    case ipv6([UInt8])
    /// ATYP X'03': a name the server resolves (1 to 255 bytes of printable ASCII).
    case domain(String)

    /// `0.0.0.0`, the bound address in a reply that has none to give.
    public static let unspecified = SOCKS5Address.ipv4([0, 0, 0, 0])

    /// The address as a host for a resolver or a log: `192.0.2.1`, `2001:db8::1`, `example.com`.
    public var host: String {
        switch self {
        case .ipv4(let bytes): return bytes.map(String.init).joined(separator: ".")
        case .ipv6(let bytes): return Self.ipv6Text(bytes)
        case .domain(let name): return name
        }
    }

    /// ATYP, then the address bytes (with a length byte for a name), as a request or reply carries
    /// them; an address that cannot be encoded (wrong length, a name of 0 or over 255 bytes) is
    /// sent as `0.0.0.0` rather than as a malformed reply.
    var encoded: [UInt8] {
        switch self {
        case .ipv4(let bytes) where bytes.count == 4: return [0x01] + bytes
        case .ipv6(let bytes) where bytes.count == 16: return [0x04] + bytes
        case .domain(let name) where (1...255).contains(name.utf8.count): return [0x03, UInt8(name.utf8.count)] + Array(name.utf8)
        default: return [0x01, 0, 0, 0, 0]
        }
    }

    /// RFC 5952 text: lower-case hex, no leading zeros, the longest run (two or more) of zero
    /// groups, the first of equal runs, as `::`.
    private static func ipv6Text(_ bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return bytes.map { String($0, radix: 16) }.joined(separator: ":") }
        let groups = (0..<8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        var best = (start: -1, length: 0)
        var index = 0
        while index < 8 {
            guard groups[index] == 0 else { index += 1; continue }
            let start = index
            while index < 8 && groups[index] == 0 { index += 1 }
            if index - start > best.length { best = (start, index - start) }
        }
        let hex = groups.map { String($0, radix: 16) }
        guard best.length >= 2 else { return hex.joined(separator: ":") }
        let head = hex[..<best.start].joined(separator: ":")
        let tail = hex[(best.start + best.length)...].joined(separator: ":")
        return head + "::" + tail
    }
}

/// The address and port a CONNECT request names.
public struct SOCKS5Target: Hashable, Sendable {
    public let address: SOCKS5Address
    public let port: UInt16

    public init(address: SOCKS5Address, port: UInt16) {
        self.address = address
        self.port = port
    }

    /// The host for a resolver: see `SOCKS5Address.host`.
    public var host: String { address.host }
}
