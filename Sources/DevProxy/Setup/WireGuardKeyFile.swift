import CertAuthority
import Foundation
import HTTPTypes
import WireGuard

/// The keys of `--mode wireguard`, kept in `wireguard.json` in the data directory (0600), so that a
/// device set up once keeps working across runs: DevProxy's own key pair and one private key per
/// device ("peer"), as the device's config carries it. Peer N's tunnel address is 10.0.0.(N+1).
///
///     {"server_private_key": "…", "peers": [{"private_key": "…"}, {"removed": "2026-12-07T11:50:00Z", "public_key": "…"}]}
///
/// A device removed (`devproxy wireguard --remove-peer N`) keeps its place in the list with its
/// public key and when it went, and no private key: the later peers keep their numbers and
/// addresses, and its number and address are never given to another device, so the flows and
/// logs that name 10.0.0.(N+1) stay that device's.
public struct WireGuardKeyFile: Sendable {
    public static let fileName = "wireguard.json"

    public let path: String
    public private(set) var server: WireGuardKey
    /// The devices' private keys, peer 1 first; nil for a device removed.
    public private(set) var peers: [WireGuardKey?]
    /// The public key of each peer, removed ones too.
    public private(set) var publicKeys: [WireGuardKey]
    /// When each removed peer was removed (ISO 8601, UTC), by index.
    public private(set) var removals: [Int: String] = [:]

    init(path: String, server: WireGuardKey, peers: [WireGuardKey]) {
        self.path = path
        self.server = server
        self.peers = peers
        publicKeys = peers.map(\.publicKey)
    }

    /// The devices DevProxy accepts, with their tunnel addresses; a removed one is there marked so
    /// (`Peer.removed`), keeping the later ones' indices.
    public var capturePeers: [WireGuardCapture.Peer] {
        publicKeys.enumerated().map {
            WireGuardCapture.Peer(publicKey: $1, address: WireGuardCapture.peerAddress($0), removed: peers[$0] == nil)
        }
    }

    /// The number of devices not removed.
    public var deviceCount: Int { peers.count { $0 != nil } }

    /// The first device not removed (0: peer 1), nil when every one was.
    public var firstDevice: Int? { peers.firstIndex { $0 != nil } }

    /// Reads the file in `directory`, making it (and the directory) with new keys when there is
    /// none, and adding peers until there are at least `peers` (removed ones count: their numbers
    /// are not given again).
    /// - Throws: `CommandFailure`-worthy `ConfigurationError` naming the file when it cannot be read
    ///   or written, or is not such a file.
    public static func load(directory: String, peers wanted: Int = 1) throws -> WireGuardKeyFile {
        try whileLocked(directory) { try loadUnlocked(directory: directory, peers: wanted) }
    }

    private static func loadUnlocked(directory: String, peers wanted: Int) throws -> WireGuardKeyFile {
        let path = directory + "/" + fileName
        var file: WireGuardKeyFile
        if FileManager.default.fileExists(atPath: path) {
            file = try read(path: path)
            if let warning = SecureFile.looseKeyWarning(path, what: "the WireGuard keys") { StandardError.warn(warning) }
        } else {
            file = WireGuardKeyFile(path: path, server: .generatePrivate(), peers: [])
        }
        let before = file.peers.count
        while file.peers.count < max(wanted, 1) {
            let key = WireGuardKey.generatePrivate()
            file.peers.append(key)
            file.publicKeys.append(key.publicKey)
        }
        if file.peers.count != before || !FileManager.default.fileExists(atPath: path) {
            try file.save(directory: directory)
        }
        return file
    }

    /// Removes peer `index` (0: peer 1) from the file in `directory` (`devproxy wireguard
    /// --remove-peer N`), read and written while no other command changes it; returns the file as
    /// written.
    /// - Throws: `ConfigurationError` when the file cannot be read or written, or `remove(peer:at:)`'s.
    public static func remove(peer index: Int, directory: String) throws -> WireGuardKeyFile {
        try whileLocked(directory) {
            var file = try read(path: directory + "/" + fileName)
            try file.remove(peer: index)
            return file
        }
    }

    /// Runs `body` holding an exclusive `flock` on `directory` itself, so that two commands changing
    /// the file at once (one adding a device, one removing another) do not write over each other's
    /// change. A directory that is not there yet is not locked (the first `load` makes it).
    private static func whileLocked<T>(_ directory: String, _ body: () throws -> T) throws -> T {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return try body() }
        // Closing the descriptor releases the lock.
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        return try body()
    }

    /// Removes peer `index` (0: peer 1) and writes the file (atomically, 0600): its private key is
    /// deleted, its public key and the time kept in its place.
    /// - Throws: `NoSuchPeer` when there is no such peer or it was already removed;
    ///   `ConfigurationError` when the file cannot be written.
    public mutating func remove(peer index: Int, at date: Date = Date()) throws {
        guard peers.indices.contains(index) else {
            throw NoSuchPeer(description: "there is no peer \(index + 1): \(path) has "
                             + (peers.count == 1 ? "peer 1" : "peers 1 to \(peers.count)"))
        }
        guard peers[index] != nil else {
            throw NoSuchPeer(description: "peer \(index + 1) (\(Self.address(index))) was already removed"
                             + (removals[index].map { " (\($0))" } ?? ""))
        }
        peers[index] = nil
        removals[index] = Self.timestamp(date)
        try save(directory: PathName.directory(of: path))
    }

    /// A peer to remove that is not there (never added, or removed before): the web UI's 404, where
    /// a file that cannot be written is a `ConfigurationError` (500).
    public struct NoSuchPeer: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Peer `index`'s tunnel address, dotted.
    public static func address(_ index: Int) -> String { NamespaceCapture.dotted(WireGuardCapture.peerAddress(index)) }

    private func save(directory: String) throws {
        do {
            try SecureFile.makePrivateDirectory(directory)
            try SecureFile.write(json, to: path, mode: 0o600)
        } catch {
            throw ConfigurationError("cannot write \(path): \(error)")
        }
    }

    private static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// The keys in the file at `path`, as they are: nothing made, nothing written (a running
    /// `devproxy run` reads the peers `devproxy wireguard --peer N` added and `--remove-peer N` removed).
    /// - Throws: `ConfigurationError` naming the file when it cannot be read or is not such a file.
    public static func read(path: String) throws -> WireGuardKeyFile {
        let bytes: [UInt8]
        do {
            bytes = try SecureFile.read(path, what: "the WireGuard keys", limit: 1 << 20)
        } catch {
            throw ConfigurationError("cannot read \(path): \(error)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let server = (object["server_private_key"] as? String).flatMap(WireGuardKey.init(base64:)),
              let list = object["peers"] as? [[String: Any]] else {
            throw ConfigurationError("\(path) is not DevProxy's WireGuard keys (server_private_key, peers); move it "
                                     + "away and devproxy makes new ones (devices then need the new config)")
        }
        var file = WireGuardKeyFile(path: path, server: server, peers: [])
        for (index, entry) in list.enumerated() {
            if let removed = entry["removed"] as? String {
                guard let key = (entry["public_key"] as? String).flatMap(WireGuardKey.init(base64:)) else {
                    throw ConfigurationError("\(path): peer \(index + 1) was removed but has no public_key of 32 bytes in base64")
                }
                file.peers.append(nil)
                file.publicKeys.append(key)
                file.removals[index] = removed
                continue
            }
            guard let key = (entry["private_key"] as? String).flatMap(WireGuardKey.init(base64:)) else {
                throw ConfigurationError("\(path): peer \(index + 1) has no private_key of 32 bytes in base64")
            }
            file.peers.append(key)
            file.publicKeys.append(key.publicKey)
        }
        return file
    }

    private var json: [UInt8] {
        let peers = self.peers.indices.map { index in
            guard let key = self.peers[index] else {
                return "{\"removed\": \"\(removals[index] ?? "")\", \"public_key\": \"\(publicKeys[index].base64)\"}"
            }
            return "{\"private_key\": \"\(key.base64)\"}"
        }.joined(separator: ", ")
        return Array("{\"server_private_key\": \"\(server.base64)\", \"peers\": [\(peers)]}\n".utf8)
    }

    /// Peer `index`'s (0 first) wg-quick config, as the WireGuard apps import it (a file or a QR
    /// code): its key and address, DevProxy as its DNS server, everything through the tunnel.
    /// IPv6 is routed into the tunnel too, where it goes nowhere (DevProxy's DNS gives no AAAA
    /// records), rather than around DevProxy. Nil for a peer removed or not in the file.
    public func clientConfig(peer index: Int, endpoint: String) -> String? {
        guard peers.indices.contains(index), let key = peers[index] else { return nil }
        return """
        [Interface]
        PrivateKey = \(key.base64)
        Address = \(NamespaceCapture.dotted(WireGuardCapture.peerAddress(index)))/32
        DNS = \(NamespaceCapture.dotted(WireGuardCapture.serverAddress))
        MTU = \(WireGuardCapture.mtu)

        [Peer]
        PublicKey = \(server.publicKey.base64)
        AllowedIPs = 0.0.0.0/0, ::/0
        Endpoint = \(endpoint)

        """
    }

    /// An endpoint as given (`devproxy wireguard --endpoint`, the web UI's endpoint field):
    /// `HOST[:PORT]`, port 51820 when none; an IPv6 host in brackets. Returns it as a config
    /// writes it (`URIHost.authority`).
    /// - Throws: `ConfigurationError` saying what is wrong, starting with the text given.
    public static func endpoint(parsing text: String) throws -> String {
        var host = text, port = ListenerMode.wireGuardPort
        if let colon = text.lastIndex(of: ":"), !text.hasSuffix("]"), text.hasPrefix("[") || text.filter({ $0 == ":" }).count == 1 {
            guard let given = Int(text[text.index(after: colon)...]), (1...65535).contains(given) else {
                throw ConfigurationError("\(text): the port is not a number from 1 to 65535")
            }
            host = String(text[..<colon])
            port = given
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, (try? LeafName(host)) != nil else {
            throw ConfigurationError("\(text) does not name a host (a name or an IP address, with a :PORT or not)")
        }
        return URIHost.authority(host: host, port: port)
    }

    /// The address a device reaches a listener on `address` at: the address itself, or for a
    /// wildcard one this machine's first non-loopback IPv4 address (a private one first).
    public static func endpoint(for address: SocketAddress) -> String {
        var host = address.host
        if host == "0.0.0.0" || host == "::" { host = localAddress() ?? host }
        return URIHost.authority(host: host, port: address.port)
    }

    /// This machine's first non-loopback IPv4 address on an interface that is up, a private
    /// (RFC 1918) one first; nil when there is none.
    static func localAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return nil }
        defer { freeifaddrs(list) }
        var found: [String] = []
        for entry in sequence(first: first, next: { $0.pointee.ifa_next }) {
            let flags = Int32(entry.pointee.ifa_flags)
            guard let address = entry.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET,
                  flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0 else { continue }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: address, count: MemoryLayout<sockaddr_in>.size))
            }
            found.append(SocketAddress(storage: storage).host)
        }
        let isPrivate = { (text: String) in
            text.hasPrefix("10.") || text.hasPrefix("192.168.")
                || (text.hasPrefix("172.") && (16...31).contains(Int(text.split(separator: ".")[1]) ?? 0))
        }
        return found.first(where: isPrivate) ?? found.first
    }
}
