import SOCKS5

/// How a playbook's input reaches the handshake.
enum FeedMode: CaseIterable, CustomStringConvertible, Sendable {
    /// Everything in one `feed`.
    case whole
    /// One `feed` per byte.
    case byteAtATime

    var description: String { self == .whole ? "whole" : "one byte at a time" }
}

/// Feeds `input` as `mode` says and returns every action but `.needMore`, which depends on the split.
///
/// Byte at a time, every feed but those that complete a message must answer exactly `[.needMore]`,
/// so a handshake that acts on a partial message fails the playbook.
func play(_ input: [UInt8], into handshake: inout SOCKS5Handshake, _ mode: FeedMode) -> [SOCKS5Action] {
    switch mode {
    case .whole:
        return handshake.feed(input).filter { $0 != .needMore }
    case .byteAtATime:
        var actions: [SOCKS5Action] = []
        for byte in input {
            actions += handshake.feed([byte]).filter { $0 != .needMore }
        }
        return actions
    }
}

/// A fresh handshake fed `input`.
func play(_ input: [UInt8], _ configuration: SOCKS5Configuration = .noAuthentication,
          _ mode: FeedMode) -> (actions: [SOCKS5Action], handshake: SOCKS5Handshake) {
    var handshake = SOCKS5Handshake(configuration: configuration)
    let actions = play(input, into: &handshake, mode)
    return (actions, handshake)
}

/// Request bytes: VER CMD RSV ATYP DST.ADDR DST.PORT.
func request(command: UInt8 = 0x01, _ address: [UInt8], port: UInt16) -> [UInt8] {
    [0x05, command, 0x00] + address + [UInt8(port >> 8), UInt8(port & 0xFF)]
}

/// ATYP X'03' with its length byte.
func domain(_ name: String) -> [UInt8] { [0x03, UInt8(name.utf8.count)] + Array(name.utf8) }

/// RFC 1929 request: VER ULEN UNAME PLEN PASSWD.
func credentials(_ user: [UInt8], _ password: [UInt8]) -> [UInt8] {
    [0x01, UInt8(user.count)] + user + [UInt8(password.count)] + password
}

/// The reply a request-stage failure sends: the code and an unspecified bound address.
func failureReply(_ code: UInt8) -> [UInt8] { [0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0] }

let noAuthGreeting: [UInt8] = [0x05, 0x01, 0x00]
let passwordGreeting: [UInt8] = [0x05, 0x02, 0x00, 0x02]
let anaOnly = SOCKS5Configuration.usernamePassword { $0 == "ana" && $1 == "s3cret:pw" }

extension SOCKS5Action {
    /// The failure, if this is `.fail`.
    var failure: SOCKS5Failure? {
        if case .fail(let failure) = self { return failure }
        return nil
    }
}
