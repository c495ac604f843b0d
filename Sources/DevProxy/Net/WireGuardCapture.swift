import CSystem
import Foundation
import HTTPTypes
import Synchronization
import WireGuard

/// `--mode wireguard` (Linux): a WireGuard server for a phone, a tablet or a VM whose WireGuard
/// app takes the config DevProxy prints, so that all the device's traffic reaches DevProxy whether
/// or not its apps read a proxy setting (a Flutter app, an app that checks for a proxy), as
/// mitmproxy's WireGuard mode does.
///
/// The parts, in the order a device's packet meets them:
/// - a UDP socket where the device's WireGuard app sends; `WireGuardResponder` (the `WireGuard`
///   module) checks and decrypts each datagram into an IP packet from the device's tunnel address;
/// - a TUN device in a network namespace of DevProxy's own (made by `devproxy run`'s helper
///   process, which passes its descriptors here): the packet is written to it, and the
///   namespace's kernel terminates the TCP connections (every one redirected to one listener, as
///   `NamespaceCapture` does for `devproxy exec --transparent`), so no TCP/IP stack is written here;
/// - each accepted connection is served as a transparent listener's (`TransparentFront`): its
///   original destination, TLS intercepted with a leaf for the SNI name;
/// - DNS (port 53, UDP or TCP, whichever server the device asks) is answered with an address of
///   198.18.0.0/15 kept for the name (`NamespaceCapture.FakeDNS`), so a connection names its host
///   and DevProxy resolves it where it runs (names only this machine knows, in /etc/hosts or on a
///   VPN, work from the device); other UDP (QUIC) is refused, so apps fall back to TCP; ICMP
///   echo to 10.0.0.1 is answered by the namespace, anything else (IPv6 too) refused at once;
/// - what the namespace sends back to the device's address is read from the TUN device,
///   encrypted, and sent to where the device's last authenticated datagram came from (roaming).
public final class WireGuardCapture: @unchecked Sendable {  // descriptors set once; state in Mutexes
    /// A device allowed to connect: its public key and its address in the tunnel; or one removed
    /// (`devproxy wireguard --remove-peer N`), which keeps its place so the later ones keep theirs.
    public struct Peer: Sendable {
        public let publicKey: WireGuardKey
        public let address: UInt32
        /// Removed: never served, and its address never given to another device.
        public let removed: Bool

        public init(publicKey: WireGuardKey, address: UInt32, removed: Bool = false) {
            self.publicKey = publicKey
            self.address = address
            self.removed = removed
        }
    }

    /// The namespace's side, made by `devproxy run`'s helper: a TUN device whose address is
    /// `serverAddress`, a TCP socket listening on every address there (the connections the
    /// namespace redirects), a UDP socket for DNS and a TCP one for DNS over TCP (the queries it
    /// redirects).
    public struct Namespace: Sendable {
        public let tun: Int32
        public let listener: Int32
        public let dns: Int32
        public let dnsStream: Int32

        public init(tun: Int32, listener: Int32, dns: Int32, dnsStream: Int32) {
            self.tun = tun
            self.listener = listener
            self.dns = dns
            self.dnsStream = dnsStream
        }
    }

    /// DevProxy's address in the tunnel (the devices' DNS server); devices get the next ones.
    public static let serverAddress: UInt32 = 0x0A00_0001
    /// The tunnel's prefix length.
    public static let prefixLength = 24
    /// The MTU the printed config gives (WireGuard's default over IPv4 and IPv6 paths).
    public static let mtu = 1420
    /// The TUN device's name in the namespace.
    public static let interface = "dpwg0"

    /// The address of peer `index` (0: 10.0.0.2).
    public static func peerAddress(_ index: Int) -> UInt32 { serverAddress + 1 + UInt32(index) }

    /// The UDP socket's address: the listener's, as flows name it.
    public let address: SocketAddress
    /// The namespace's listener, which `ProxyServer` accepts from.
    public let listener: Listener
    let names: NamespaceCapture.FakeDNS
    private let responder: WireGuardResponder
    /// The peers and where each last sent from, peer 1 first; append-only (peers added to the
    /// key file while running, `refreshPeers`), a removed one marked in its place.
    private let table: Mutex<PeerTable>
    /// The key file peers are read from while running; nil when there is none to read.
    private let keysPath: String?
    private let serverKey: WireGuardKey
    /// The IPv6 addresses devices sent from and the peer that last did, for the namespace's answers.
    private let v6Sources = Mutex<[[UInt8]: Int]>([:])
    static let v6SourceLimit = 4096
    /// The key file as last read (device, inode, size, modification time), so it is read only when it changed.
    private let keysRead = Mutex<[Int]?>(nil)
    private let udp: Int32
    private let tun: Int32
    private let dns: Int32
    private let dnsStream: Int32
    /// Answers the DNS-over-TCP connections `dnsStream` accepts, as `dns`'s queries are answered.
    private let dnsStreams: NamespaceCapture.DNSStreamServer
    private let stopped = Atomic<Bool>(false)
    private let threads = DispatchGroup()
    /// What is said once per source and reason (a device with a stale config retries every 5 s).
    private let said = Mutex(Set<String>())
    private var report: @Sendable (String) -> Void = { _ in }
    /// Told the tunnel address of each peer removed while running, to close its connections.
    private let removalObservers = Mutex<[@Sendable (String) -> Void]>([])

    /// Binds the UDP socket on `host:port` (port 0 picks one) and takes the namespace's descriptors.
    /// - Throws: `NetworkError` when the address cannot be bound.
    /// - Parameters:
    ///   - namesFile: where the names DevProxy's DNS gave addresses for are kept across runs
    ///     (a device caches an answer past a restart, and its connections must still name their host);
    ///     nil keeps them in memory only.
    ///   - peers: every peer by its index, removed ones marked (`WireGuardKeyFile.capturePeers`).
    ///   - keysPath: the key file (`WireGuardKeyFile`) `peers` came from, read again for peers added
    ///     to it or removed from it while running (`refreshPeers`); nil for none.
    public init(host: String, port: Int, privateKey: WireGuardKey, peers: [Peer], namespace: Namespace,
                namesFile: String? = nil, keysPath: String? = nil) throws {
        guard let target = try Resolver.resolve(host: host, port: port, passive: true).first else {
            throw NetworkError(.unresolvable, "cannot resolve \(host)")
        }
        let fd = socket(target.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NetworkError(.failed, "socket(): \(String(cString: strerror(errno)))") }
        guard target.withSockaddr({ bind(fd, $0, $1) }) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw NetworkError(.failed, "cannot listen on \(target) (UDP): \(reason)"
                               + (errno == EADDRINUSE ? " (another program uses that port: choose another, or port 0)" : ""))
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        address = SocketAddress(storage: storage)
        udp = fd
        tun = namespace.tun
        dns = namespace.dns
        dnsStream = namespace.dnsStream
        listener = Listener(listeningDescriptor: namespace.listener)
        table = Mutex(PeerTable(peers: peers, endpoints: Array(repeating: nil, count: peers.count)))
        serverKey = privateKey
        self.keysPath = keysPath
        responder = WireGuardResponder(privateKey: privateKey, peers: peers.map(\.publicKey))
        for (index, peer) in peers.enumerated() where peer.removed { responder.remove(peer: index) }
        if let namesFile {
            // The table keeps the log (its `given` closure holds it) for as long as it lives.
            let log = NameLog(path: namesFile)
            names = NamespaceCapture.FakeDNS(known: log.known) { log.append($0, $1) }
        } else {
            names = NamespaceCapture.FakeDNS()
        }
        dnsStreams = NamespaceCapture.DNSStreamServer(listening: namespace.dnsStream) { [names] in names.answer($0) }
        if let keysPath { keysRead.withLock { $0 = Self.signature(of: keysPath) } }
    }

    deinit {
        Glibc.close(udp)
        Glibc.close(tun)
        Glibc.close(dns)
        Glibc.close(dnsStream)
    }

    /// Calls `observer` with the tunnel address (dotted) of each peer removed while running, after
    /// the peer's sessions were dropped: the proxy closes the connections that came from there.
    public func onPeerRemoved(_ observer: @escaping @Sendable (String) -> Void) {
        removalObservers.withLock { $0.append(observer) }
    }

    /// Starts its threads; `report` gets one line for each device that connects (its first
    /// handshake, and again after it was away), each added or removed while running, and each
    /// kind of datagram refused, once per source.
    public func start(report: @escaping @Sendable (String) -> Void) {
        self.report = report
        for name in ["udp", "tun", "dns", "dns-tcp"] {
            threads.enter()
            let thread = Thread { [self] in
                switch name {
                case "udp": receivingDatagrams()
                case "tun": sendingPackets()
                case "dns-tcp": dnsStreams.serve { [self] in stopped.load(ordering: .relaxed) }
                default: answeringDNS()
                }
                threads.leave()
            }
            thread.name = "devproxy-wireguard-\(name)"
            thread.start()
        }
    }

    /// Stops its threads (within a second).
    public func stop() {
        stopped.store(true, ordering: .relaxed)
        _ = threads.wait(timeout: .now() + 3)
    }

    /// What is known of a device now (for the web UI's devices list).
    public struct PeerStatus: Sendable {
        /// Seconds since its last completed handshake; nil when it never made one in this run.
        public let secondsSinceHandshake: TimeInterval?
        /// Where its last authenticated datagram came from; nil when none came.
        public let endpoint: SocketAddress?
    }

    /// Each peer's status, peer 1 first: read only, taken at the time of the call.
    public var peerStatus: [PeerStatus] {
        let now = Self.now()
        let known = table.withLock { $0.endpoints }
        return known.indices.map { index in
            PeerStatus(secondsSinceHandshake: responder.lastHandshake(peer: index).map { max(0, now - $0) },
                       endpoint: known[index].map { SocketAddress(storage: $0) })
        }
    }

    /// The host a connection's original destination stands for: the name DevProxy's DNS gave
    /// `address` for, else the address itself; nil for an address of that range it never gave
    /// (the device looked the name up before DevProxy last started).
    func host(for address: SocketAddress) -> String? { names.host(for: address.host) }

    /// The devices, peer 1 first: those of the start and those added since, a removed one marked
    /// (`Peer.removed`) in its place.
    public var peers: [Peer] { table.withLock { $0.peers } }

    private struct PeerTable {
        var peers: [Peer]
        var endpoints: [sockaddr_storage?]
    }

    /// Reads the key file again when it changed since it was last read: accepts the peers added to
    /// it (`devproxy wireguard --peer N` while this runs) and stops serving those removed from it
    /// (`--remove-peer N`), saying so for each; returns how many were added. A file that cannot be
    /// read, or holds another server key, is said once and changes nothing.
    @discardableResult
    public func refreshPeers() -> Int {
        guard let keysPath else { return 0 }
        return keysRead.withLock { last -> Int in
            let now = Self.signature(of: keysPath)
            guard now != last else { return 0 }
            last = now
            return readKeys(keysPath).map { apply($0) } ?? 0
        }
    }

    /// The key file as it is now, read once (the web UI's config route: the private key of a device
    /// added since the start), its additions and removals applied as `refreshPeers` does; nil when
    /// it cannot be read or holds another server key.
    public func currentKeys() -> WireGuardKeyFile? {
        guard let keysPath else { return nil }
        return keysRead.withLock { last -> WireGuardKeyFile? in
            last = Self.signature(of: keysPath)
            guard let file = readKeys(keysPath) else { return nil }
            apply(file)
            return file
        }
    }

    /// The file at `path`, when it reads and holds this run's server key; else said once.
    private func readKeys(_ path: String) -> WireGuardKeyFile? {
        let file: WireGuardKeyFile
        do {
            file = try WireGuardKeyFile.read(path: path)
        } catch {
            sayOnce("keys|\(error)", "wireguard: cannot read new peers: \(error)")
            return nil
        }
        guard file.server.bytes == serverKey.bytes else {
            sayOnce("keys|server", "wireguard: \(path) holds another server key now; this run keeps its own "
                    + "(restart devproxy run to use the new keys; devices then need their new configs)")
            return nil
        }
        return file
    }

    /// Brings the peers in line with `file`: a peer of this run is removed when the file no longer
    /// holds its key as a device in its place (removed there, the file cut short, or another key
    /// put there by hand); the file's peers past this run's are added. Returns how many were added.
    @discardableResult
    private func apply(_ file: WireGuardKeyFile) -> Int {
        let current = file.capturePeers.prefix(Self.maximumPeers)
        let known = table.withLock { $0.peers }
        var removed: [Int] = []
        for (index, peer) in known.enumerated() where !peer.removed {
            let kept = index < current.count && !current[index].removed
                && current[index].publicKey.bytes == peer.publicKey.bytes
            if !kept { removed.append(index) }
        }
        for index in removed { remove(index) }
        guard current.count > known.count else { return 0 }
        let added = Array(current[known.count...])
        // The responder first: a peer is in the table only once its handshakes are accepted.
        responder.add(peers: added.map(\.publicKey))
        for (offset, peer) in added.enumerated() where peer.removed { responder.remove(peer: known.count + offset) }
        table.withLock { table in
            table.peers += added
            table.endpoints += Array(repeating: nil, count: added.count)
        }
        for (offset, peer) in added.enumerated() where !peer.removed {
            report("wireguard: peer \(known.count + offset + 1) (\(NamespaceCapture.dotted(peer.address))) added from "
                   + "\(file.path)")
        }
        return added.count { !$0.removed }
    }

    /// Stops serving peer `index`: its sessions dropped (nothing more decrypted or sealed, its next
    /// handshake refused as an unknown key's), where it sent from forgotten, and its connections
    /// through the tunnel closed by the observers; said once.
    private func remove(_ index: Int) {
        guard responder.remove(peer: index) else { return }
        let address = table.withLock { table -> UInt32 in
            let peer = table.peers[index]
            table.peers[index] = Peer(publicKey: peer.publicKey, address: peer.address, removed: true)
            table.endpoints[index] = nil
            return peer.address
        }
        v6Sources.withLock { sources in sources = sources.filter { $0.value != index } }
        let dotted = NamespaceCapture.dotted(address)
        report("wireguard: peer \(index + 1) (\(dotted)) removed")
        for observer in removalObservers.withLock({ $0 }) { observer(dotted) }
    }

    /// Peers past 10.0.0.251 would leave the tunnel's /24 (`devproxy wireguard --peer` stops at 250).
    static let maximumPeers = 250

    private static func signature(of path: String) -> [Int]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [Int(info.st_dev), Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
    }

    /// The peer whose tunnel address is `address`, and where it last sent from.
    private func peer(at address: UInt32) -> (index: Int, endpoint: sockaddr_storage?)? {
        table.withLock { table in
            table.peers.firstIndex { $0.address == address && !$0.removed }.map { ($0, table.endpoints[$0]) }
        }
    }

    private static func now() -> TimeInterval { TimeInterval(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Whether `fd` became readable within 200 ms (so the loops see `stopped`).
    private func readable(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 200) > 0
    }

    /// Datagrams from devices: handshakes answered, packets written to the TUN device, and the
    /// passive keepalives sent once a second when due.
    private func receivingDatagrams() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var lastTick = Self.now()
        var connected = Set<Int>()
        var lastRefresh = 0.0
        while !stopped.load(ordering: .relaxed) {
            let now = Self.now()
            if now - lastTick >= 1 {
                lastTick = now
                // A device removed from the key file (`devproxy wireguard --remove-peer N`) is
                // dropped within a second; the file is read only when it changed.
                refreshPeers()
                for (peer, datagram) in responder.keepalives(now: now) { send(datagram, to: peer) }
                for index in connected {
                    // Away: no handshake for REJECT_AFTER_TIME × 3 (a device rekeys every 2 minutes while it talks).
                    if let last = responder.lastHandshake(peer: index), now - last > 540 { connected.remove(index) }
                }
            }
            guard readable(udp), let (count, source) = Self.receive(from: udp, into: &buffer) else { continue }
            let datagram = Array(buffer[0..<count])
            var received = responder.receive(datagram, now: Self.now())
            if received.unknownKey != nil, Self.now() - lastRefresh >= 1 {
                // A device set up while this runs (`devproxy wireguard --peer N`): its first
                // handshake is answered once the key file says so (read at most once a second).
                lastRefresh = Self.now()
                if refreshPeers() > 0 { received = responder.receive(datagram, now: Self.now()) }
            }
            for reply in received.replies { Self.send(reply, from: udp, to: source) }
            guard let index = received.peer else {
                if let why = received.dropped { sayOnce("\(SocketAddress(storage: source).host)|\(why)",
                                                        "wireguard: a datagram from \(SocketAddress(storage: source)) "
                                                        + "was refused: \(why)") }
                continue
            }
            let peer = table.withLock { table -> Peer in
                // Not for a peer removed while its datagram was being opened (its packets are not delivered).
                if !table.peers[index].removed { table.endpoints[index] = source }
                return table.peers[index]
            }
            guard !peer.removed else { continue }
            if !connected.contains(index) && !received.replies.isEmpty {
                connected.insert(index)
                report("wireguard: peer \(index + 1) (\(NamespaceCapture.dotted(peer.address))) connected from "
                       + "\(SocketAddress(storage: source))")
            }
            for packet in received.packets { deliver(packet, from: index, address: peer.address) }
        }
    }

    /// A decrypted packet into the namespace, when it is IPv4 from the peer's own address (the
    /// tunnel's cryptokey routing: a peer speaks only for its address), or IPv6 from any address
    /// (a device's own, of its Wi-Fi: the tunnel has none), which the namespace refuses at once
    /// and whose answer goes back to the peer that last sent from that address.
    private func deliver(_ packet: [UInt8], from index: Int, address: UInt32) {
        if packet.count >= 40, packet[0] >> 4 == 6 {
            let source = Array(packet[8..<24])
            v6Sources.withLock { sources in
                if sources[source] != index {
                    if sources.count >= Self.v6SourceLimit { sources.removeAll() }
                    sources[source] = index
                }
            }
            _ = packet.withUnsafeBytes { Glibc.write(tun, $0.baseAddress, $0.count) }
            return
        }
        guard packet.count >= 20, packet[0] >> 4 == 4 else { return }
        let source = UInt32(packet[12]) << 24 | UInt32(packet[13]) << 16 | UInt32(packet[14]) << 8 | UInt32(packet[15])
        guard source == address else {
            sayOnce("source|\(index)", "wireguard: peer \(index + 1) sent from \(NamespaceCapture.dotted(source)), not its "
                    + "address \(NamespaceCapture.dotted(address)): dropped (its config's Address is wrong)")
            return
        }
        _ = packet.withUnsafeBytes { Glibc.write(tun, $0.baseAddress, $0.count) }
    }

    /// Packets the namespace sends to a device's address, encrypted to it.
    private func sendingPackets() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopped.load(ordering: .relaxed) {
            guard readable(tun) else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(tun, $0.baseAddress, $0.count) }
            if count >= 40, buffer[0] >> 4 == 6 {
                // The namespace's refusal of a device's IPv6 packet, back to the peer that sent from there.
                let destination = Array(buffer[24..<40])
                guard let index = v6Sources.withLock({ $0[destination] }),
                      let datagram = responder.seal(Array(buffer[0..<count]), peer: index, now: Self.now()) else { continue }
                send(datagram, to: index)
                continue
            }
            guard count >= 20, buffer[0] >> 4 == 4 else { continue }
            let destination = UInt32(buffer[16]) << 24 | UInt32(buffer[17]) << 16 | UInt32(buffer[18]) << 8
                | UInt32(buffer[19])
            guard let (index, endpoint) = peer(at: destination), let endpoint,
                  let datagram = responder.seal(Array(buffer[0..<count]), peer: index, now: Self.now()) else { continue }
            Self.send(datagram, from: udp, to: endpoint)
        }
    }

    private func send(_ datagram: [UInt8], to peer: Int) {
        guard let endpoint = table.withLock({ $0.endpoints.indices.contains(peer) ? $0.endpoints[peer] : nil }) else { return }
        Self.send(datagram, from: udp, to: endpoint)
    }

    /// A datagram received on `fd` (which was readable) and where it came from; nil for none.
    private static func receive(from fd: Int32, into buffer: inout [UInt8]) -> (Int, sockaddr_storage)? {
        var source = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let count = buffer.withUnsafeMutableBytes { raw in
            withUnsafeMutablePointer(to: &source) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length) }
            }
        }
        return count > 0 ? (count, source) : nil
    }

    private static func send(_ datagram: [UInt8], from fd: Int32, to endpoint: sockaddr_storage) {
        var target = endpoint
        let length = socklen_t(Int32(target.ss_family) == AF_INET6 ? MemoryLayout<sockaddr_in6>.size
                                                                  : MemoryLayout<sockaddr_in>.size)
        _ = datagram.withUnsafeBytes { raw in
            withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.sendto(fd, raw.baseAddress, raw.count, 0, $0, length)
                }
            }
        }
    }

    /// The namespace's redirected DNS queries, answered by `names`.
    private func answeringDNS() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.load(ordering: .relaxed) {
            guard readable(dns), let (count, from) = Self.receive(from: dns, into: &buffer),
                  let reply = names.answer(Array(buffer[0..<count])) else { continue }
            Self.send(reply, from: dns, to: from)
        }
    }

    private func sayOnce(_ key: String, _ line: String) {
        let first = said.withLock { said -> Bool in
            guard said.count < 1000 else { return false }
            return said.insert(key).inserted
        }
        if first { report(line) }
    }
}

/// The names `WireGuardCapture`'s DNS gave addresses for, one `ADDRESS NAME` line each, appended as
/// they are given (0600): read back at start, the newest `limit` kept.
private final class NameLog: @unchecked Sendable {  // `append` runs on the DNS thread alone
    static let limit = 100_000
    let known: [(name: String, address: UInt32)]
    private let fd: Int32

    init(path: String) {
        var known: [(name: String, address: UInt32)] = []
        if let bytes = FileManager.default.contents(atPath: path), bytes.count <= 16 << 20 {
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1)
                guard parts.count == 2, let address = NamespaceCapture.number(String(parts[0])) else { continue }
                known.append((String(parts[1]), address))
            }
        }
        let rewrite = known.count > Self.limit
        if rewrite { known.removeFirst(known.count - Self.limit) }
        self.known = known
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (rewrite ? O_TRUNC : 0), 0o600)
        if rewrite { for (name, address) in known { append(name, address) } }
    }

    deinit { if fd >= 0 { close(fd) } }

    func append(_ name: String, _ address: UInt32) {
        guard fd >= 0, !name.contains("\n") else { return }
        let line = Array("\(NamespaceCapture.dotted(address)) \(name)\n".utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}
