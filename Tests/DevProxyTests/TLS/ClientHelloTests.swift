@testable import DevProxy
import Testing

/// `ClientHello.parse` on hand-built hellos: the SNI it reads, and the names RFC 6066 §3 rules out.
@Suite struct ClientHelloTests {
    /// A TLS 1.2-framed ClientHello record with one cipher suite and a server_name extension
    /// holding one host_name entry of `name`'s bytes.
    static func hello(serverName name: [UInt8]) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xff), UInt8(value & 0xff)] }
        let entry = [0x00] + u16(name.count) + name                      // host_name, HostName
        let serverNameList = u16(entry.count) + entry
        let extensions = u16(0x0000) + u16(serverNameList.count) + serverNameList
        var body: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 0x2a, count: 32)  // legacy_version, random
        body += [0x00]                                                    // legacy_session_id
        body += u16(2) + [0x13, 0x01]                                     // cipher_suites
        body += [0x01, 0x00]                                              // compression: null
        body += u16(extensions.count) + extensions
        let handshake = [0x01, 0x00] + u16(body.count) + body             // ClientHello, u24 length
        return [0x16, 0x03, 0x01] + u16(handshake.count) + handshake
    }

    @Test func theServerNameIsRead() {
        #expect(ClientHello.parse(Self.hello(serverName: Array("API.Acme.test".utf8)))
                == .hello(ClientHello(serverName: "api.acme.test", alpn: [], legacyVersion: 0x0303)))
    }

    /// RFC 6066 §3 has `HostName<1..2^16-1>`: an empty one was read as the server name "" (found by
    /// the client-hello fuzz target once it had seeds), as a name with a space or a byte past ASCII is not.
    @Test(arguments: [[], Array("a b".utf8), [0x61, 0xc3, 0xa9]] as [[UInt8]])
    func aNameThatIsNoHostNameIsRefused(_ name: [UInt8]) {
        #expect(ClientHello.parse(Self.hello(serverName: name)) == .notTLS("malformed ClientHello"))
    }
}
