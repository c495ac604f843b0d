#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import SOCKS5
import Testing

/// Every way a handshake fails: the reply code of RFC 1928 §6 (X'01'…X'08'), method X'FF', and
/// the RFC 1929 status, whole and one byte at a time.
@Suite struct SOCKS5FailureTests {
    /// A request-stage failure: one `.fail` after the method reply, with the code in its bytes.
    func expectRequestFailure(_ input: [UInt8], _ code: UInt8, _ kind: SOCKS5Failure.Kind, _ mode: FeedMode,
                              reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var (actions, handshake) = play(noAuthGreeting + input, .noAuthentication, mode)
        #expect(actions.count == 2, "\(actions)", sourceLocation: sourceLocation)
        #expect(actions.first == .send([0x05, 0x00]), sourceLocation: sourceLocation)
        let failure = actions.last?.failure
        #expect(failure?.kind == kind, sourceLocation: sourceLocation)
        #expect(failure?.reply?.rawValue == code, sourceLocation: sourceLocation)
        #expect(failure?.bytes == failureReply(code), sourceLocation: sourceLocation)
        #expect(failure?.reason.contains(reason) == true, "\(failure?.reason ?? "")", sourceLocation: sourceLocation)
        #expect(handshake.state == .failed, sourceLocation: sourceLocation)
        #expect(handshake.feed([0x05, 0x01, 0x00]) == [], "nothing more after a failure", sourceLocation: sourceLocation)
    }

    @Test(arguments: FeedMode.allCases)
    func bindAndUDPAssociateAreRefusedWithX07(_ mode: FeedMode) {
        expectRequestFailure(request(command: 0x02, [0x01, 1, 2, 3, 4], port: 80), 0x07, .unsupportedCommand, mode, reason: "BIND")
        expectRequestFailure(request(command: 0x03, domain("a.dev"), port: 53), 0x07, .unsupportedCommand, mode, reason: "UDP ASSOCIATE")
        expectRequestFailure(request(command: 0x09, [0x01, 1, 2, 3, 4], port: 80), 0x07, .unsupportedCommand, mode, reason: "command 9")
    }

    @Test(arguments: FeedMode.allCases)
    func anUnknownAddressTypeIsRefusedWithX08(_ mode: FeedMode) {
        expectRequestFailure([0x05, 0x01, 0x00, 0x02, 1, 2, 3, 4], 0x08, .unsupportedAddressType, mode, reason: "address type is 2")
        expectRequestFailure([0x05, 0x01, 0x00, 0x05], 0x08, .unsupportedAddressType, mode, reason: "address type is 5")
    }

    @Test(arguments: FeedMode.allCases)
    func malformedRequestsAreAGeneralFailureX01(_ mode: FeedMode) {
        expectRequestFailure([0x04, 0x01, 0x00, 0x01, 1, 2, 3, 4, 0, 80], 0x01, .malformedRequest, mode, reason: "version 4")
        expectRequestFailure([0x05, 0x01, 0x01, 0x01, 1, 2, 3, 4, 0, 80], 0x01, .malformedRequest, mode, reason: "reserved byte is 1")
        expectRequestFailure([0x05, 0x01, 0x00, 0x03, 0x00, 0, 80], 0x01, .malformedRequest, mode, reason: "empty domain")
        expectRequestFailure(request(domain("a b.dev"), port: 80), 0x01, .malformedRequest, mode, reason: "printable ASCII")
        expectRequestFailure(request([0x03, 3, 0x61, 0x00, 0x62], port: 80), 0x01, .malformedRequest, mode, reason: "printable ASCII")
        expectRequestFailure(request([0x01, 1, 2, 3, 4], port: 0), 0x01, .malformedRequest, mode, reason: "port 0")
    }

    /// X'02'…X'06' answer a failed connection; the caller picks the code, from `errno` or a rule.
    @Test(arguments: [SOCKS5Reply.generalFailure, .notAllowed, .networkUnreachable, .hostUnreachable,
                      .connectionRefused, .ttlExpired])
    func aFailedConnectionRepliesWithTheCallersCode(_ reply: SOCKS5Reply) {
        var (actions, handshake) = play(noAuthGreeting + request(domain("a.dev"), port: 443), .noAuthentication, .whole)
        #expect(actions.last == .connect(SOCKS5Target(address: .domain("a.dev"), port: 443)))
        let failed = handshake.connectFailed(reply, reason: "no route to a.dev:443")
        #expect(failed == [.fail(SOCKS5Failure(kind: .connectFailed, reply: reply, bytes: failureReply(reply.rawValue),
                                               reason: "no route to a.dev:443"))])
        #expect(handshake.state == .failed)
    }

    @Test func succeededIsNeverTheReplyToAFailure() {
        var (_, handshake) = play(noAuthGreeting + request(domain("a.dev"), port: 443), .noAuthentication, .whole)
        #expect(handshake.connectFailed(.succeeded, reason: "?").first?.failure?.bytes == failureReply(0x01))
    }

    @Test func connectErrnoMapsToTheReplyCode() {
        #expect(SOCKS5Reply(connectErrno: ECONNREFUSED) == .connectionRefused)
        #expect(SOCKS5Reply(connectErrno: ENETUNREACH) == .networkUnreachable)
        #expect(SOCKS5Reply(connectErrno: ENETDOWN) == .networkUnreachable)
        #expect(SOCKS5Reply(connectErrno: EHOSTUNREACH) == .hostUnreachable)
        #expect(SOCKS5Reply(connectErrno: EHOSTDOWN) == .hostUnreachable)
        #expect(SOCKS5Reply(connectErrno: ETIMEDOUT) == .ttlExpired)
        #expect(SOCKS5Reply(connectErrno: EACCES) == .notAllowed)
        #expect(SOCKS5Reply(connectErrno: EPERM) == .notAllowed)
        #expect(SOCKS5Reply(connectErrno: EADDRNOTAVAIL) == .generalFailure)
    }

    @Test(arguments: FeedMode.allCases)
    func noAcceptableMethodIsXFF(_ mode: FeedMode) {
        let noMethods = play([0x05, 0x00], .noAuthentication, mode).actions
        #expect(noMethods.count == 1)
        #expect(noMethods.first?.failure?.bytes == [0x05, 0xFF])
        #expect(noMethods.first?.failure?.kind == .noAcceptableMethods)
        #expect(noMethods.first?.failure?.reply == nil)
        let onlyPassword = play([0x05, 0x01, 0x02], .noAuthentication, mode).actions
        #expect(onlyPassword.first?.failure?.bytes == [0x05, 0xFF])
        #expect(onlyPassword.first?.failure?.reason.contains("X'02'") == true)
        let onlyNone = play(noAuthGreeting, anaOnly, mode).actions
        #expect(onlyNone.first?.failure?.bytes == [0x05, 0xFF])
        #expect(onlyNone.first?.failure?.reason.hasPrefix("proxy credentials required") == true)
    }

    /// A SOCKS4 or HTTP client gets no SOCKS5 answer, and it is known from the first byte.
    @Test(arguments: [[0x04, 0x01, 0x00, 0x50], Array("CONNECT a.dev:443 HTTP/1.1\r\n".utf8)] as [[UInt8]])
    func anotherProtocolIsClosedWithoutAReply(_ input: [UInt8]) {
        var handshake = SOCKS5Handshake()
        let actions = handshake.feed(input.prefix(1))
        #expect(actions == [.fail(SOCKS5Failure(kind: .unsupportedVersion, reply: nil, bytes: [],
                                                reason: "the greeting is version \(input[0]), not SOCKS5 (a SOCKS4 or HTTP client?)"))])
    }
}
