@testable import DevProxy
import Foundation
import Testing

// Linux only: DevProxy finds a client's process through netlink and /proc (macOS leaves it unknown).
#if os(Linux)

/// The process behind a client's socket (`SocketOwners`, `SocketDiagnostics`), asked of sockets
/// this test opens itself: the client end is in this process, so the owner is this pid, its
/// `/proc` name and executable; a socket that is not on this host, or a search with no time left,
/// finds nobody.
@Suite struct SocketOwnersTests {
    /// A connection from this process to a listener of its own: the accepted end and the client's.
    static func connectedPair(host: String) throws -> (listener: Listener, accepted: Socket, client: Socket) {
        let listener = try Listener(host: host, port: 0)
        let client = try Socket.connect(host: host, port: listener.address.port, timeout: 5)
        let accepted = try #require(try listener.accept(timeout: 5))
        return (listener, accepted, client)
    }

    @Test(arguments: ["127.0.0.1", "::1"])
    func theClientsProcessIsThisOne(host: String) throws {
        let (listener, accepted, client) = try Self.connectedPair(host: host)
        defer { accepted.close(); client.close(); _ = listener }
        let found = try #require(SocketOwners().owner(ofPeerOf: accepted))
        #expect(found.pid == Int(getpid()))
        let comm = try String(contentsOfFile: "/proc/self/comm", encoding: .utf8)
            .trimmingCharacters(in: .newlines)
        #expect(found.name == comm)
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        #expect(found.exe == exe)
    }

    /// The kernel's answer names the client's socket (its own address first), not the proxy's end:
    /// asked the other way round it is the accepted socket, another inode.
    @Test func theKernelNamesTheClientsSocket() throws {
        let (listener, accepted, client) = try Self.connectedPair(host: "127.0.0.1")
        defer { accepted.close(); client.close(); _ = listener }
        let peer = try #require(accepted.peerAddress), local = try #require(accepted.localAddress)
        let clientEnd = try #require(SocketDiagnostics.find(local: peer, remote: local))
        let acceptedEnd = try #require(SocketDiagnostics.find(local: local, remote: peer))
        #expect(clientEnd.inode != acceptedEnd.inode)
        #expect(clientEnd.uid == geteuid())
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(client.fd)")
        #expect(link == "socket:[\(clientEnd.inode)]")
    }

    /// A 4-tuple no socket here has (a peer on another host, a closed connection): nobody.
    @Test func aSocketThatIsNotHereHasNoOwner() throws {
        let (listener, accepted, client) = try Self.connectedPair(host: "127.0.0.1")
        let peer = try #require(accepted.peerAddress), local = try #require(accepted.localAddress)
        client.close()
        accepted.close()
        _ = listener
        // Closed on both ends, the client's socket may linger in TIME_WAIT, which has no inode.
        #expect(SocketDiagnostics.find(local: peer, remote: local)?.inode == nil)
        let elsewhere = try #require(try Resolver.resolve(host: "192.0.2.1", port: 40000, passive: true).first)
        #expect(SocketDiagnostics.find(local: elsewhere, remote: local) == nil)
    }

    /// The search stops when its budget of CPU time is spent, or its time limit has passed, leaving
    /// the process unknown; the owners found lately are looked at first, whatever the bounds.
    @Test func theSearchIsBoundedAndRemembersOwners() throws {
        let (listener, accepted, client) = try Self.connectedPair(host: "127.0.0.1")
        defer { accepted.close(); client.close(); _ = listener }
        let peer = try #require(accepted.peerAddress), local = try #require(accepted.localAddress)
        let inode = try #require(SocketDiagnostics.find(local: peer, remote: local)).inode
        #expect(SocketOwners(budget: .zero).pid(holding: inode) == nil)
        #expect(SocketOwners(budget: .seconds(5), wallLimit: .zero).pid(holding: inode) == nil)
        #expect(SocketOwners(budget: .seconds(5), wallLimit: .zero, recent: [getpid()]).pid(holding: inode) == getpid())
        #expect(SocketOwners(budget: .zero, recent: [getpid()]).pid(holding: inode) == getpid())
        let owners = SocketOwners(recent: [1])
        #expect(owners.pid(holding: inode) == getpid())
        #expect(owners.recentOwners == [getpid(), 1])
        #expect(owners.pid(holding: UInt32.max) == nil)
    }

    /// A scan notes the owner's other sockets: a second connection the client opened before the
    /// first was looked up is found without scanning again, once.
    @Test func aScanNotesTheOwnersOtherSockets() throws {
        let first = try Self.connectedPair(host: "127.0.0.1")
        let second = try Self.connectedPair(host: "127.0.0.1")
        defer { [first, second].forEach { $0.accepted.close(); $0.client.close(); _ = $0.listener } }
        func inode(_ pair: (listener: Listener, accepted: Socket, client: Socket)) throws -> UInt32 {
            let peer = try #require(pair.accepted.peerAddress), local = try #require(pair.accepted.localAddress)
            return try #require(SocketDiagnostics.find(local: peer, remote: local)).inode
        }
        let owners = SocketOwners()
        #expect(owners.pid(holding: try inode(first)) == getpid())
        #expect(owners.noted(try inode(second)) == getpid())
        #expect(owners.noted(try inode(first)) == nil)
        #expect(owners.pid(holding: try inode(second)) == getpid())
        #expect(owners.noted(try inode(second)) == nil)
    }
}
#endif
