/// The constants of the WireGuard protocol, from the whitepaper (Donenfeld, "WireGuard: Next
/// Generation Kernel Network Tunnel"): §5.4 for the handshake's strings and message sizes, §6.1
/// for the timers and counter limits.
enum WireGuardProtocol {
    static let construction = Array("Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s".utf8)
    static let identifier = Array("WireGuard v1 zx2c4 Jason@zx2c4.com".utf8)
    static let labelMAC1 = Array("mac1----".utf8)
    static let labelCookie = Array("cookie--".utf8)

    /// The message types of §5.4.2–§5.4.6, each the first byte, then three reserved zero bytes.
    static let typeInitiation: UInt8 = 1
    static let typeResponse: UInt8 = 2
    static let typeCookieReply: UInt8 = 3
    static let typeTransport: UInt8 = 4

    static let initiationSize = 148
    static let responseSize = 92
    static let cookieReplySize = 64
    /// Type, reserved, receiver index and counter: the transport message's header (§5.4.6).
    static let transportHeaderSize = 16
    /// The smallest transport message: a header and the tag of an empty (keepalive) packet.
    static let transportMinimumSize = transportHeaderSize + ChaChaPoly.tagSize

    /// §6.1's limits on one keypair.
    static let rekeyAfterMessages: UInt64 = 1 << 60
    static let rejectAfterMessages: UInt64 = UInt64.max - (1 << 13)
    static let rekeyAfterTime: Double = 120
    static let rejectAfterTime: Double = 180
    static let rekeyAttemptTime: Double = 90
    static let rekeyTimeout: Double = 5
    static let keepaliveTimeout: Double = 10

    /// HASH(CONSTRUCTION), the initial chaining key (§5.4.2).
    static let initialChainingKey = Blake2s.hash(construction)
    /// HASH(HASH(CONSTRUCTION) ‖ IDENTIFIER), the initial hash before the responder's static key is mixed in.
    static let initialHash = Blake2s.hash(initialChainingKey, identifier)

    static func readLE32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
    }

    static func readLE64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }

    static func writeLE32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
    }

    static func writeLE64(_ value: UInt64, into bytes: inout [UInt8], at offset: Int) {
        for i in 0..<8 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
    }

    /// TAI64N of §5.4.2 for a Unix time: 8 bytes big-endian of 2^62 + 10 + seconds (the TAI label
    /// wireguard-go and the kernel use), then 4 bytes big-endian of nanoseconds. Big-endian, so
    /// later times compare greater byte by byte.
    static func tai64n(unixTime: Double) -> [UInt8] {
        let seconds = UInt64(0x4000_0000_0000_000a) &+ UInt64(max(0, unixTime.rounded(.down)))
        let nanoseconds = UInt32(min(999_999_999, max(0, (unixTime - unixTime.rounded(.down)) * 1e9)))
        return (0..<8).map { UInt8(truncatingIfNeeded: seconds >> (56 - 8 * UInt64($0))) }
            + (0..<4).map { UInt8(truncatingIfNeeded: nanoseconds >> (24 - 8 * UInt32($0))) }
    }
}
