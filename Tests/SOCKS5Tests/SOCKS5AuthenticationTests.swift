import SOCKS5
import Synchronization
import Testing

/// RFC 1929 username/password when the proxy has `--proxy-auth`: status X'00' lets the request
/// through, anything else ends with status X'01'.
@Suite struct SOCKS5AuthenticationTests {
    @Test(arguments: FeedMode.allCases)
    func rightCredentialsPipelinedWithTheRequest(_ mode: FeedMode) {
        let input = passwordGreeting + credentials(Array("ana".utf8), Array("s3cret:pw".utf8))
            + request([0x01, 10, 0, 0, 1], port: 22)
        let (actions, handshake) = play(input, anaOnly, mode)
        let target = SOCKS5Target(address: .ipv4([10, 0, 0, 1]), port: 22)
        #expect(actions == [.send([0x05, 0x02]), .send([0x01, 0x00]), .connect(target)])
        #expect(handshake.state == .connecting(target))
    }

    @Test(arguments: FeedMode.allCases)
    func wrongCredentialsGetStatus1AndNoRequestIsRead(_ mode: FeedMode) {
        let input = passwordGreeting + credentials(Array("ana".utf8), Array("guess".utf8)) + request([0x01, 10, 0, 0, 1], port: 22)
        let (actions, handshake) = play(input, anaOnly, mode)
        #expect(actions.count == 2)
        #expect(actions.first == .send([0x05, 0x02]))
        #expect(actions.last == .fail(SOCKS5Failure(kind: .authenticationFailed, reply: nil, bytes: [0x01, 0x01],
                                                    reason: "wrong proxy credentials")))
        #expect(handshake.state == .failed)
    }

    @Test func theCheckSeesTheNameAndPasswordExactlyAnEmptyPasswordToo() {
        let seen = Mutex<[String]>([])
        let configuration = SOCKS5Configuration.usernamePassword { user, password in
            seen.withLock { $0.append(user + "|" + password) }
            return true
        }
        for (user, password) in [("ana", ""), ("zoë", "p:w d"), (String(repeating: "u", count: 255), String(repeating: "p", count: 255))] {
            let (actions, _) = play(passwordGreeting + credentials(Array(user.utf8), Array(password.utf8)), configuration, .whole)
            #expect(actions == [.send([0x05, 0x02]), .send([0x01, 0x00])])
        }
        #expect(seen.withLock { $0 } == ["ana|", "zoë|p:w d", String(repeating: "u", count: 255) + "|" + String(repeating: "p", count: 255)])
    }

    @Test func credentialsThatAreNotUTF8AreRefusedWithoutAsking() {
        let asked = Mutex(false)
        let configuration = SOCKS5Configuration.usernamePassword { _, _ in asked.withLock { $0 = true }; return true }
        let (actions, _) = play(passwordGreeting + credentials([0x61, 0xFF], Array("pw".utf8)), configuration, .whole)
        #expect(actions.last?.failure?.kind == .authenticationFailed)
        #expect(asked.withLock { $0 } == false)
    }

    @Test(arguments: FeedMode.allCases)
    func aMalformedSubNegotiationGetsStatus1(_ mode: FeedMode) {
        let wrongVersion = play(passwordGreeting + [0x05, 0x01, 0x61, 0x00], anaOnly, mode).actions
        #expect(wrongVersion.last?.failure?.kind == .malformedAuthentication)
        #expect(wrongVersion.last?.failure?.bytes == [0x01, 0x01])
        #expect(wrongVersion.last?.failure?.reason.contains("version 5") == true)
        let emptyName = play(passwordGreeting + [0x01, 0x00, 0x00], anaOnly, mode).actions
        #expect(emptyName.last?.failure?.kind == .malformedAuthentication)
        #expect(emptyName.last?.failure?.reason == "the username is empty")
    }

    @Test func withoutAuthenticationAClientOfferingBothIsNotAskedForCredentials() {
        let (actions, handshake) = play(passwordGreeting, .noAuthentication, .whole)
        #expect(actions == [.send([0x05, 0x00])])
        #expect(handshake.state == .request)
    }
}
