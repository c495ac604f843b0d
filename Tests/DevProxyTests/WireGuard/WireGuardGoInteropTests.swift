import Foundation
import Synchronization
import Testing
import TestSupport
import WireGuard

/// The responder against a real initiator: wireguard-go in a network namespace of the test's own,
/// reaching the test's UDP socket on loopback (`NamespaceUDPRelay`), pinged through the tunnel; the test answers
/// the ICMP echo requests itself.
@Suite(.serialized) struct WireGuardGoInteropTests {
    static let unavailableReason: String? = {
        if let reason = NetworkNamespace.unavailableReason { return reason }
        for tool in ["wireguard-go", "wg", "ping"] where !isOnPath(tool) { return "\(tool) is not installed" }
        guard FileManager.default.fileExists(atPath: "/dev/net/tun") else { return "no /dev/net/tun" }
        return nil
    }()

    static func isOnPath(_ tool: String) -> Bool {
        ["/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin"].contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    @Test(.enabled(if: unavailableReason == nil, "needs root namespaces, wireguard-go, wg and ping"),
          .backstop)
    func pingsThroughWireguardGoGetAnsweredAcrossARehandshake() throws {
        let tunnel = try WireGuardGoTunnel()
        defer { tunnel.stop() }

        let first = try tunnel.ping(["-c", "3", "-W", "2"])
        #expect(first.contains("3 packets transmitted, 3 received"), "\(first)")
        #expect(tunnel.responder.lastHandshake(peer: 0) != nil)

        let large = try tunnel.ping(["-c", "2", "-W", "2", "-s", "1300"])
        #expect(large.contains("2 packets transmitted, 2 received"), "\(large)")
        #expect(tunnel.echo.largestRequest() >= 1328, "a 1300-byte payload makes a 1328-byte packet")

        let burst = try tunnel.ping(["-c", "50", "-i", "0.01", "-W", "2"])
        #expect(burst.contains("50 packets transmitted, 50 received"), "\(burst)")

        // A peer removed and added again starts over with a fresh initiation, timestamped later than the first.
        let before = tunnel.echo.handshakes()
        try tunnel.readdPeer()
        let again = try tunnel.ping(["-c", "3", "-W", "2"])
        #expect(again.contains("3 packets transmitted, 3 received"), "\(again)")
        #expect(tunnel.echo.handshakes() > before, "a second initiation from the same key")
        #expect(tunnel.echo.drops().allSatisfy { !$0.contains("replayed handshake") }, "\(tunnel.echo.drops())")
    }
}

/// What the responder's loop saw, shared with the test's thread.
final class EchoRecord: Sendable {
    private struct Counts {
        var handshakes = 0
        var largest = 0
        var drops: [String] = []
    }
    private let counts = Mutex(Counts())

    func handshake() { counts.withLock { $0.handshakes += 1 } }
    func request(size: Int) { counts.withLock { $0.largest = max($0.largest, size) } }
    func drop(_ reason: String) { counts.withLock { $0.drops.append(reason) } }
    func handshakes() -> Int { counts.withLock { $0.handshakes } }
    func largestRequest() -> Int { counts.withLock { $0.largest } }
    func drops() -> [String] { counts.withLock { $0.drops } }
}

/// wireguard-go in a namespace, peered with a `WireGuardResponder` behind a UDP socket on this
/// namespace's loopback, which the namespace's 127.0.0.1:PORT reaches through a
/// `NamespaceUDPRelay` (a veth pair here made headless Chromium in parallel tests drop its loads
/// with `ERR_NETWORK_CHANGED`); `stop()` ends the process, the loop, the relay and the namespace.
final class WireGuardGoTunnel {
    let namespace: NetworkNamespace
    let responder: WireGuardResponder
    let echo = EchoRecord()
    private let serverKey = WireGuardKey.generatePrivate()
    private let clientKey = WireGuardKey.generatePrivate()
    /// A preshared key too, so the psk step of the handshake (§5.4.3) meets a real peer's.
    private let presharedKey = WireGuardKey.generatePrivate()
    private let interface: String
    private let rootAddress = "127.0.0.1"
    private var relay: NamespaceUDPRelay?
    private let directory: TemporaryDirectory
    private var port: UInt16 = 0
    private var socket: Int32 = -1
    private var daemon: Process?
    private var loop: Thread?
    private let control = LoopControl()

    init() throws {
        namespace = try NetworkNamespace()
        responder = WireGuardResponder(privateKey: serverKey, peers: [clientKey.publicKey], presharedKey: presharedKey)
        let tag = UInt32.random(in: 0..<100_000)
        // Interface names are namespaced but wg's control sockets (/var/run/wireguard/NAME.sock) are not.
        interface = "wgdp\(tag)"
        directory = TemporaryDirectory()
        do {
            try bindSocket()
            relay = try NamespaceUDPRelay(namespace: namespace, port: Int(port))
            startLoop()
            try startDaemon()
        } catch {
            stop()
            throw error
        }
    }

    /// Runs ping inside the namespace towards the responder's side of the tunnel; its output.
    func ping(_ arguments: [String]) throws -> String {
        try Subprocess.run("ip", Array(namespace.launcher.dropFirst()) + ["ping"] + arguments + ["10.199.0.1"], timeout: 30).output
    }

    /// Removes the peer from wireguard-go and adds it again, so its next packet starts a new handshake.
    func readdPeer() throws {
        try namespace.sh("wg set \(interface) peer \(serverKey.publicKey.base64) remove")
        try configurePeer()
    }

    func stop() {
        control.stopping.store(true, ordering: .sequentiallyConsistent)
        if let daemon, daemon.isRunning {
            daemon.terminate()
            let deadline = Date().addingTimeInterval(5)
            while daemon.isRunning && Date() < deadline { usleep(10_000) }
            if daemon.isRunning { kill(daemon.processIdentifier, SIGKILL) }
        }
        daemon = nil
        if loop != nil {
            let deadline = Date().addingTimeInterval(5)
            while !control.ended.load(ordering: .sequentiallyConsistent) && Date() < deadline { usleep(10_000) }
            loop = nil
        }
        if socket >= 0 { close(socket); socket = -1 }
        relay?.stop()
        relay = nil
    }

    private func bindSocket() throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard socket >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, rootAddress, &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw TestFailure("bind \(rootAddress): errno \(errno)") }
        port = UInt16(bigEndian: address.sin_port)
        var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private func startDaemon() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ip", "netns", "exec", namespace.name, "wireguard-go", "-f", interface]
        process.standardOutput = FileHandle.nullDevice
        // Kept for the failure's message: why it ended, if it did.
        let log = directory.file("wireguard-go.log")
        FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        daemon = process
        // 30 s: in `.ci/run`'s parallel run on two cores, with other namespaces' tests beside it, its
        // device once took longer than 10 s to show (CI on 0aed376d).
        let deadline = Date().addingTimeInterval(30)
        while (try? Subprocess.run("ip", Array(namespace.launcher.dropFirst()) + ["wg", "show", interface], timeout: 5))?.status != 0 {
            guard process.isRunning, Date() < deadline else {
                let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw TestFailure("wireguard-go -f \(interface) did not start within 30 s "
                                  + (process.isRunning ? "(still running)" : "(it exited: \(process.terminationStatus))")
                                  + ": \(said.suffix(500))")
            }
            usleep(50_000)
        }
        try namespace.sh("wg set \(interface) private-key \(try secretFile("client.key", clientKey))")
        try configurePeer()
        try namespace.sh("ip addr add 10.199.0.2/32 dev \(interface) && ip link set \(interface) up"
                         + " && ip route add 10.199.0.0/24 dev \(interface)")
    }

    private func configurePeer() throws {
        try namespace.sh("wg set \(interface) peer \(serverKey.publicKey.base64) endpoint \(rootAddress):\(port)"
                         + " allowed-ips 10.199.0.0/24 preshared-key \(try secretFile("psk.key", presharedKey))")
    }

    /// A key in base64 in a file only its owner may read, as wg(8) wants its secrets.
    private func secretFile(_ name: String, _ key: WireGuardKey) throws -> String {
        let path = directory.path + "/" + name
        guard FileManager.default.createFile(atPath: path, contents: Data((key.base64 + "\n").utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw TestFailure("cannot write \(path)")
        }
        return path
    }

    private func startLoop() {
        let socket = self.socket, responder = self.responder, echo = self.echo
        let control = self.control
        let thread = Thread {
            defer { control.ended.store(true, ordering: .sequentiallyConsistent) }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var endpoint = sockaddr_in()
            while !control.stopping.load(ordering: .sequentiallyConsistent) {
                var source = sockaddr_in()
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let count = withUnsafeMutablePointer(to: &source) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(socket, &buffer, buffer.count, 0, $0, &length) }
                }
                let now = ProcessInfo.processInfo.systemUptime
                for (_, datagram) in responder.keepalives(now: now) { Self.send(datagram, socket: socket, to: endpoint) }
                guard count > 0 else { continue }
                let received = responder.receive(Array(buffer[0..<count]), now: now)
                if let reason = received.dropped { echo.drop(reason) }
                if received.peer != nil { endpoint = source }
                if !received.replies.isEmpty { echo.handshake() }
                for reply in received.replies { Self.send(reply, socket: socket, to: source) }
                for packet in received.packets {
                    guard let reply = ICMPEcho.reply(to: packet, from: [10, 199, 0, 1]) else { continue }
                    echo.request(size: packet.count)
                    if let sealed = responder.seal(reply, peer: 0, now: now) { Self.send(sealed, socket: socket, to: endpoint) }
                }
            }
        }
        thread.start()
        loop = thread
    }

    private static func send(_ datagram: [UInt8], socket: Int32, to address: sockaddr_in) {
        var address = address
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(socket, datagram, datagram.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}

/// Tells the responder's loop to stop, and says when it has.
final class LoopControl: Sendable {
    let stopping = Atomic<Bool>(false)
    let ended = Atomic<Bool>(false)
}

/// ICMP echo replies (RFC 792) to IPv4 echo requests, with the IPv4 header and ICMP checksums (RFC 1071).
enum ICMPEcho {
    /// The reply to `packet` when it is an IPv4 ICMP echo request to `address`, else nil.
    static func reply(to packet: [UInt8], from address: [UInt8]) -> [UInt8]? {
        guard packet.count >= 20, packet[0] >> 4 == 4 else { return nil }
        let headerLength = Int(packet[0] & 0x0f) * 4
        guard headerLength >= 20, packet.count >= headerLength + 8, packet[9] == 1,
              Array(packet[16..<20]) == address, packet[headerLength] == 8 else { return nil }
        var reply = packet
        reply.replaceSubrange(12..<16, with: packet[16..<20])
        reply.replaceSubrange(16..<20, with: packet[12..<16])
        reply[8] = 64
        reply[10] = 0; reply[11] = 0
        let headerSum = checksum(reply[0..<headerLength])
        reply[10] = UInt8(headerSum >> 8); reply[11] = UInt8(headerSum & 0xff)
        reply[headerLength] = 0
        reply[headerLength + 2] = 0; reply[headerLength + 3] = 0
        let icmpSum = checksum(reply[headerLength...])
        reply[headerLength + 2] = UInt8(icmpSum >> 8); reply[headerLength + 3] = UInt8(icmpSum & 0xff)
        return reply
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var sum: UInt32 = 0
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let high = UInt32(bytes[index]) << 8
            let low = index + 1 < bytes.endIndex ? UInt32(bytes[index + 1]) : 0
            sum += high | low
            index += 2
        }
        while sum >> 16 != 0 { sum = (sum & 0xffff) + (sum >> 16) }
        return ~UInt16(sum)
    }
}
