/// The server side of a SOCKS5 handshake (RFC 1928, with RFC 1929 username/password), sans IO:
/// bytes from the client in, actions out. It never reads, writes, resolves or connects.
///
/// A CONNECT for an IPv4, IPv6 or domain-name address becomes `.connect(target)`; BIND and
/// UDP ASSOCIATE are refused with X'07'. Bytes may arrive split anywhere or pipelined (greeting,
/// credentials and request in one read).
///
///     var handshake = SOCKS5Handshake(configuration: .noAuthentication)
///     handshake.feed([5, 1, 0])                 // [.send([5, 0]), .needMore]
///     handshake.feed([5, 1, 0, 1, 127, 0, 0, 1, 0, 80])   // [.connect(127.0.0.1:80)]
///     handshake.connected(bound: .ipv4([127, 0, 0, 1]), port: 50000)
///                                               // [.send([5, 0, 0, 1, …]), .established(firstBytes: [])]
public struct SOCKS5Handshake: Sendable {
    /// Where the handshake is.
    public enum State: Hashable, Sendable {
        case greeting
        case authenticating
        case request
        /// `.connect` was returned; waiting for `connected` or `connectFailed`.
        case connecting(SOCKS5Target)
        case established
        case failed
    }

    public private(set) var state: State = .greeting
    private let configuration: SOCKS5Configuration
    private var buffer: [UInt8] = []

    public init(configuration: SOCKS5Configuration = .noAuthentication) {
        self.configuration = configuration
    }

    /// Takes bytes read from the client and says what to do.
    ///
    /// - Returns: actions in order; the last is `.needMore`, `.connect`, `.relay` or `.fail`
    ///   (nothing once failed).
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [SOCKS5Action] {
        switch state {
        case .failed:
            return []
        case .established:
            let forwarded = Array(bytes)
            return forwarded.isEmpty ? [] : [.relay(forwarded)]
        case .connecting:
            buffer.append(contentsOf: bytes)
            guard buffer.count <= configuration.maximumEarlyData else {
                return [.fail(fail(.tooMuchEarlyData, reply: .generalFailure,
                                   "the client sent more than \(configuration.maximumEarlyData) bytes before the tunnel opened"))]
            }
            return []
        case .greeting, .authenticating, .request:
            buffer.append(contentsOf: bytes)
            return advance()
        }
    }

    /// The connection to the target is open: the success reply, then the tunnel.
    ///
    /// - Parameters:
    ///   - bound: the local address of the connection to the target (BND.ADDR).
    ///   - port: its local port (BND.PORT).
    public mutating func connected(bound: SOCKS5Address = .unspecified, port: UInt16 = 0) -> [SOCKS5Action] {
        guard case .connecting = state else { return [] }
        state = .established
        let early = buffer
        buffer = []
        return [.send(Self.reply(.succeeded, bound: bound, port: port)), .established(firstBytes: early)]
    }

    /// Connecting to the target failed: the reply with `reply` (X'02'…X'06', or X'01'), then close.
    ///
    /// - Parameter reason: what failed, for the flow log (`connection refused by 10.0.0.5:443`).
    public mutating func connectFailed(_ reply: SOCKS5Reply, reason: String) -> [SOCKS5Action] {
        guard case .connecting = state else { return [] }
        return [.fail(fail(.connectFailed, reply: reply == .succeeded ? .generalFailure : reply, reason))]
    }

    /// The reply message of RFC 1928 §6: VER REP RSV ATYP BND.ADDR BND.PORT.
    public static func reply(_ code: SOCKS5Reply, bound: SOCKS5Address = .unspecified, port: UInt16 = 0) -> [UInt8] {
        [0x05, code.rawValue, 0x00] + bound.encoded + [UInt8(port >> 8), UInt8(port & 0xFF)]
    }

    // MARK: - Stages

    /// Runs the stages for as long as the buffer holds a whole message.
    private mutating func advance() -> [SOCKS5Action] {
        var actions: [SOCKS5Action] = []
        while true {
            let step: Step
            switch state {
            case .greeting: step = greeting()
            case .authenticating: step = authentication()
            case .request: step = request()
            default: return actions
            }
            switch step {
            case .needMore:
                return actions + [.needMore]
            case .sent(let bytes, let consumed):
                buffer.removeFirst(consumed)
                actions.append(.send(bytes))
            case .connect(let target, let consumed):
                buffer.removeFirst(consumed)
                state = .connecting(target)
                // Whatever followed the request is early data, under the same limit as data fed
                // later, so a split never changes the actions: `.connect`, then `.fail`.
                guard buffer.count <= configuration.maximumEarlyData else {
                    return actions + [.connect(target), .fail(fail(.tooMuchEarlyData, reply: .generalFailure,
                                                 "the client sent more than \(configuration.maximumEarlyData) bytes before the tunnel opened"))]
                }
                return actions + [.connect(target)]
            case .failed(let failure):
                return actions + [.fail(failure)]
            }
        }
    }

    /// What one stage made of the buffer.
    private enum Step {
        case needMore
        case sent([UInt8], consumed: Int)
        case connect(SOCKS5Target, consumed: Int)
        case failed(SOCKS5Failure)
    }

    /// RFC 1928 §3: VER NMETHODS METHODS.
    private mutating func greeting() -> Step {
        guard let version = buffer.first else { return .needMore }
        // Not SOCKS5: there is no reply the client would understand.
        guard version == 0x05 else {
            return .failed(fail(.unsupportedVersion, reply: nil, bytes: [],
                                "the greeting is version \(version), not SOCKS5 (a SOCKS4 or HTTP client?)"))
        }
        guard buffer.count >= 2 else { return .needMore }
        let count = Int(buffer[1])
        guard count > 0 else {
            return .failed(fail(.noAcceptableMethods, reply: nil, bytes: [0x05, 0xFF], "the greeting offers no methods"))
        }
        guard buffer.count >= 2 + count else { return .needMore }
        let methods = buffer[2..<(2 + count)]
        switch configuration.authentication {
        case .none where methods.contains(0x00):
            state = .request
            return .sent([0x05, 0x00], consumed: 2 + count)
        case .usernamePassword where methods.contains(0x02):
            state = .authenticating
            return .sent([0x05, 0x02], consumed: 2 + count)
        case .none:
            return .failed(fail(.noAcceptableMethods, reply: nil, bytes: [0x05, 0xFF],
                                "the client offers \(Self.methodList(methods)), not X'00' (no authentication)"))
        case .usernamePassword:
            return .failed(fail(.noAcceptableMethods, reply: nil, bytes: [0x05, 0xFF],
                                "proxy credentials required: the client offers \(Self.methodList(methods)), not X'02' (username/password)"))
        }
    }

    /// RFC 1929 §2: VER ULEN UNAME PLEN PASSWD; the answer is VER STATUS, X'00' for success.
    private mutating func authentication() -> Step {
        guard case .usernamePassword(let check) = configuration.authentication else { return .needMore }
        guard let version = buffer.first else { return .needMore }
        guard version == 0x01 else {
            return .failed(fail(.malformedAuthentication, reply: nil, bytes: [0x01, 0x01],
                                "the username/password sub-negotiation is version \(version), not 1"))
        }
        guard buffer.count >= 2 else { return .needMore }
        let userLength = Int(buffer[1])
        guard userLength > 0 else {
            return .failed(fail(.malformedAuthentication, reply: nil, bytes: [0x01, 0x01], "the username is empty"))
        }
        guard buffer.count >= 3 + userLength else { return .needMore }
        let passwordLength = Int(buffer[2 + userLength])
        let total = 3 + userLength + passwordLength
        guard buffer.count >= total else { return .needMore }
        let user = String(validating: buffer[2..<(2 + userLength)], as: UTF8.self)
        let password = String(validating: buffer[(3 + userLength)..<total], as: UTF8.self)
        guard let user, let password, check(user, password) else {
            return .failed(fail(.authenticationFailed, reply: nil, bytes: [0x01, 0x01], "wrong proxy credentials"))
        }
        state = .request
        return .sent([0x01, 0x00], consumed: total)
    }

    /// RFC 1928 §4: VER CMD RSV ATYP DST.ADDR DST.PORT.
    private mutating func request() -> Step {
        guard buffer.count >= 4 else {
            // A wrong version is known from the first byte; say so without waiting for more.
            if let version = buffer.first, version != 0x05 { return malformed("the request is version \(version), not 5") }
            return .needMore
        }
        let (version, command, reserved, addressType) = (buffer[0], buffer[1], buffer[2], buffer[3])
        guard version == 0x05 else { return malformed("the request is version \(version), not 5") }
        guard reserved == 0x00 else { return malformed("the request's reserved byte is \(reserved), not 0") }
        let addressLength: Int
        switch addressType {
        case 0x01: addressLength = 4
        case 0x04: addressLength = 16
        case 0x03:
            guard buffer.count >= 5 else { return .needMore }
            addressLength = 1 + Int(buffer[4])
            guard addressLength > 1 else { return malformed("the request names an empty domain") }
        default:
            return .failed(fail(.unsupportedAddressType, reply: .addressTypeNotSupported,
                                "the request's address type is \(addressType), not 1 (IPv4), 3 (domain) or 4 (IPv6)"))
        }
        // The command is refused only once the request is whole, so nothing of it is left behind.
        let total = 4 + addressLength + 2
        guard buffer.count >= total else { return .needMore }
        guard command == 0x01 else {
            let name = command == 0x02 ? "BIND" : command == 0x03 ? "UDP ASSOCIATE" : "command \(command)"
            return .failed(fail(.unsupportedCommand, reply: .commandNotSupported, "\(name) is not supported; only CONNECT"))
        }
        let address: SOCKS5Address
        switch addressType {
        case 0x01: address = .ipv4(Array(buffer[4..<8]))
        case 0x04: address = .ipv6(Array(buffer[4..<20]))
        default:
            let name = buffer[5..<(4 + addressLength)]
            // A host name is printable ASCII; anything else is not a name a resolver should see.
            guard name.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                return malformed("the requested domain holds bytes that are not printable ASCII")
            }
            address = .domain(String(decoding: name, as: UTF8.self))
        }
        let port = UInt16(buffer[total - 2]) << 8 | UInt16(buffer[total - 1])
        guard port != 0 else { return malformed("the request asks for port 0 of \(address.host)") }
        return .connect(SOCKS5Target(address: address, port: port), consumed: total)
    }

    // MARK: - Failures

    private mutating func malformed(_ reason: String) -> Step {
        .failed(fail(.malformedRequest, reply: .generalFailure, reason))
    }

    /// A request-stage failure: its reply carries `reply` and an unspecified bound address.
    private mutating func fail(_ kind: SOCKS5Failure.Kind, reply: SOCKS5Reply, _ reason: String) -> SOCKS5Failure {
        fail(kind, reply: reply, bytes: Self.reply(reply), reason)
    }

    private mutating func fail(_ kind: SOCKS5Failure.Kind, reply: SOCKS5Reply?, bytes: [UInt8], _ reason: String)
        -> SOCKS5Failure {
        state = .failed
        buffer = []
        return SOCKS5Failure(kind: kind, reply: reply, bytes: bytes, reason: reason)
    }

    private static func methodList(_ methods: ArraySlice<UInt8>) -> String {
        methods.map { "X'" + String($0, radix: 16, uppercase: true).leftPadded(to: 2) + "'" }.joined(separator: ", ")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
