import CTLS
import Foundation
import Synchronization

/// The responder side of WireGuard (whitepaper §5 and §6), sans-IO: datagrams in, datagrams and
/// decrypted IP packets out. One static key pair and a list of peers allowed to connect.
///
/// It never initiates a handshake and never sends a cookie reply (§5.3, "under load"): it answers
/// each valid initiation with a response, keeps per peer the previous, current and next keypairs
/// of §6.3's rotation, and checks TAI64N timestamps (§5.1) and transport counters (§5.4.6)
/// against replay. Thread-safe: `receive` may run on one thread while `seal` runs on another.
public final class WireGuardResponder: Sendable {
    /// What one received datagram gave.
    public struct Received: Sendable {
        /// Datagrams to send back to the source of the one received (a handshake response).
        public var replies: [[UInt8]] = []
        /// Decrypted IP packets with their padding removed; a keepalive gives none.
        public var packets: [[UInt8]] = []
        /// The index into `peers` when the datagram authenticated (for roaming), else nil.
        public var peer: Int?
        /// Why it was dropped, one line; nil when accepted.
        public var dropped: String?
        /// The static public key of a handshake initiation that authenticated (its mac1 and
        /// encrypted key were good) from a key not among the peers: the caller may learn of new
        /// peers (`add(peers:)`) and hand the same datagram in again.
        public var unknownKey: WireGuardKey?

        static func drop(_ reason: String, peer: Int? = nil) -> Received { Received(peer: peer, dropped: reason) }
    }

    /// What never changes about a peer: its key and the secrets derived from it once.
    private struct PeerIdentity: Sendable {
        let publicKey: [UInt8]
        /// DH(S_priv_r, S_pub_i), nil when the key is a point of small order (it can never connect).
        let staticShared: [UInt8]?
        /// HASH(LABEL_MAC1 ‖ S_pub_i): the mac1 key of the responses sent to it.
        let mac1Key: [UInt8]
    }

    /// What the handshakes and transport messages change about a peer.
    private struct PeerSessions {
        /// The greatest TAI64N timestamp accepted in an initiation from it (§5.1).
        var lastTimestamp: [UInt8]?
        var previous: Keypair?
        var current: Keypair?
        /// The keypair of the latest response, until the initiator's first transport message confirms it (§6.3).
        var next: Keypair?
        var lastHandshake: Double?
        /// When a passive keepalive is due (§6.5): set by data received, cleared by anything sent.
        var keepaliveDue: Double?
        /// Set by `remove(peer:)`: no handshake, transport message or seal for it any more.
        var removed = false
    }

    private struct State {
        /// Append-only: a peer's index never changes.
        var identities: [PeerIdentity]
        var peerByKey: [[UInt8]: Int]
        var peers: [PeerSessions]
        /// Live receiver indices and the peer each belongs to.
        var sessions: [UInt32: Int] = [:]
    }

    private let privateKey: [UInt8]
    private let publicKey: [UInt8]
    private let presharedKey: [UInt8]
    /// HASH(LABEL_MAC1 ‖ S_pub_r): the key of the mac1 every initiation to this side carries.
    private let mac1Key: [UInt8]
    private let state: Mutex<State>

    /// - Parameters:
    ///   - privateKey: this side's static private key.
    ///   - peers: the public keys allowed to connect; `Received.peer` and `seal`'s `peer` index this
    ///     list, and `add(peers:)` appends to it.
    ///   - presharedKey: the optional symmetric key Q of §5.2 (all zeros when nil), the same for every peer.
    public init(privateKey: WireGuardKey, peers: [WireGuardKey], presharedKey: WireGuardKey? = nil) {
        self.privateKey = privateKey.bytes
        publicKey = privateKey.publicKey.bytes
        self.presharedKey = presharedKey?.bytes ?? [UInt8](repeating: 0, count: 32)
        mac1Key = HandshakeLayout.mac1Key(for: publicKey)
        var state = State(identities: [], peerByKey: [:], peers: [])
        Self.append(peers, to: &state, privateKey: privateKey.bytes, always: true)
        self.state = Mutex(state)
    }

    /// The number of peers: those given at the start and those added since.
    public var peerCount: Int { state.withLock { $0.peers.count } }

    /// Allows `keys` to connect too, each not yet a peer as the next peer (in order); the indices of
    /// the peers before them do not change. Returns how many were added.
    @discardableResult
    public func add(peers keys: [WireGuardKey]) -> Int {
        let privateKey = self.privateKey
        return state.withLock { state in
            let before = state.peers.count
            Self.append(keys, to: &state, privateKey: privateKey, always: false)
            return state.peers.count - before
        }
    }

    /// Stops serving peer `peer` at once (a device revoked while running): its keypairs are
    /// forgotten, so its transport messages are unknown receiver indices and nothing is sealed for
    /// it, and its key is no longer a peer's, so its next initiation is refused as an unknown key's
    /// (`Received.unknownKey`). Its index stays taken: the other peers keep theirs. Returns false
    /// when there is no such peer or it was already removed.
    @discardableResult
    public func remove(peer: Int) -> Bool {
        state.withLock { state in
            guard state.peers.indices.contains(peer), !state.peers[peer].removed else { return false }
            let sessions = state.peers[peer]
            for keypair in [sessions.previous, sessions.current, sessions.next].compactMap({ $0 }) {
                state.sessions[keypair.localIndex] = nil
            }
            state.peers[peer] = PeerSessions(removed: true)
            let key = state.identities[peer].publicKey
            if state.peerByKey[key] == peer { state.peerByKey[key] = nil }
            return true
        }
    }

    /// Whether `remove(peer:)` removed peer `peer`.
    public func isRemoved(peer: Int) -> Bool {
        state.withLock { $0.peers.indices.contains(peer) && $0.peers[peer].removed }
    }

    /// Appends each key as a peer (`always`: even one already known, which then keeps its first
    /// index for handshakes, as a list given twice did before).
    private static func append(_ keys: [WireGuardKey], to state: inout State, privateKey: [UInt8], always: Bool) {
        for key in keys {
            guard always || state.peerByKey[key.bytes] == nil else { continue }
            if state.peerByKey[key.bytes] == nil { state.peerByKey[key.bytes] = state.peers.count }
            state.identities.append(PeerIdentity(publicKey: key.bytes,
                                                 staticShared: X25519.sharedSecret(privateKey: privateKey, publicKey: key.bytes),
                                                 mac1Key: HandshakeLayout.mac1Key(for: key.bytes)))
            state.peers.append(PeerSessions())
        }
    }

    /// Handles one datagram received from anywhere.
    /// - Parameter now: seconds from any monotonic origin, the same origin on every call.
    public func receive(_ datagram: [UInt8], now: TimeInterval) -> Received {
        guard datagram.count >= 4 else { return .drop("garbage: \(datagram.count) bytes, too short for a WireGuard message") }
        guard datagram[1] == 0, datagram[2] == 0, datagram[3] == 0 else {
            return .drop("garbage: reserved bytes not zero, not a WireGuard message")
        }
        switch datagram[0] {
        case WireGuardProtocol.typeInitiation:
            guard datagram.count == WireGuardProtocol.initiationSize else {
                return .drop("garbage: handshake initiation of \(datagram.count) bytes, not \(WireGuardProtocol.initiationSize)")
            }
            return receiveInitiation(datagram, now: now)
        case WireGuardProtocol.typeResponse:
            return .drop("handshake response ignored: this side never initiates")
        case WireGuardProtocol.typeCookieReply:
            return .drop("cookie reply ignored: this side never initiates")
        case WireGuardProtocol.typeTransport:
            guard datagram.count >= WireGuardProtocol.transportMinimumSize else {
                return .drop("garbage: transport message of \(datagram.count) bytes, under \(WireGuardProtocol.transportMinimumSize)")
            }
            return receiveTransport(datagram, now: now)
        default:
            return .drop("garbage: unknown message type \(datagram[0])")
        }
    }

    /// A transport message carrying `packet` to peer `peer`, or nil when there is no usable
    /// session: no handshake yet, not yet confirmed by the initiator's first transport message,
    /// or older than REJECT_AFTER_TIME / REJECT_AFTER_MESSAGES.
    public func seal(_ packet: [UInt8], peer: Int, now: TimeInterval) -> [UInt8]? {
        guard packet.count <= 65_535 else { return nil }
        let keypair = state.withLock { state -> Keypair? in
            guard state.peers.indices.contains(peer), let current = state.peers[peer].current,
                  !current.isExpired(now: now) else { return nil }
            // §6.5: anything sent makes a pending passive keepalive unnecessary.
            state.peers[peer].keepaliveDue = nil
            return current
        }
        return keypair?.seal(packet)
    }

    /// Passive keepalives due (§6.5: data received and nothing sent back for KEEPALIVE_TIMEOUT):
    /// an empty transport message for each such peer. Call it about once a second.
    ///
    /// It also forgets the keypairs of peers without a new handshake for REJECT_AFTER_TIME × 3 (§6: their keys
    /// are erased), so a transport message under them is then an unknown receiver index.
    public func keepalives(now: TimeInterval) -> [(peer: Int, datagram: [UInt8])] {
        let due = state.withLock { state -> [(Int, Keypair)] in
            var due: [(Int, Keypair)] = []
            for index in state.peers.indices {
                let sessions = [state.peers[index].previous, state.peers[index].current, state.peers[index].next]
                let newest = sessions.compactMap { $0?.created }.max()
                if let newest, now - newest >= 3 * WireGuardProtocol.rejectAfterTime {
                    for keypair in sessions.compactMap({ $0 }) { state.sessions[keypair.localIndex] = nil }
                    state.peers[index].previous = nil
                    state.peers[index].current = nil
                    state.peers[index].next = nil
                }
                guard let when = state.peers[index].keepaliveDue, when <= now else { continue }
                state.peers[index].keepaliveDue = nil
                if let current = state.peers[index].current, !current.isExpired(now: now) { due.append((index, current)) }
            }
            return due
        }
        return due.compactMap { peer, keypair in keypair.seal([]).map { (peer: peer, datagram: $0) } }
    }

    /// When the peer's last handshake completed (its first transport message under the new keys
    /// arrived), nil if never.
    public func lastHandshake(peer: Int) -> TimeInterval? {
        state.withLock { $0.peers.indices.contains(peer) ? $0.peers[peer].lastHandshake : nil }
    }

    // MARK: handshake (§5.4.2, §5.4.3)

    private func receiveInitiation(_ message: [UInt8], now: Double) -> Received {
        let layout = HandshakeLayout.self
        let mac1 = Blake2s.mac(key: mac1Key, message[0..<layout.initiationMAC1])
        let mac1Matches = mac1.withUnsafeBytes { expected in
            message.withUnsafeBytes { CRYPTO_memcmp(expected.baseAddress, $0.baseAddress! + layout.initiationMAC1, 16) == 0 }
        }
        guard mac1Matches else { return .drop("bad mac1 on handshake initiation") }

        var noise = SymmetricState(responderStatic: publicKey)
        let ephemeral = Array(message[layout.initiationEphemeral..<(layout.initiationEphemeral + 32)])
        noise.mixKey(ephemeral)
        noise.mixHash(ephemeral)
        guard let ephemeralShared = X25519.sharedSecret(privateKey: privateKey, publicKey: ephemeral) else {
            return .drop("handshake initiation with an ephemeral key of small order")
        }
        guard let initiatorStatic = noise.decryptAndHash(key: noise.mixKeyForCipher(ephemeralShared),
                                                         message[layout.initiationStatic..<layout.initiationTimestamp]) else {
            return .drop("handshake initiation whose static key does not decrypt")
        }
        let known = state.withLock { state in state.peerByKey[initiatorStatic].map { ($0, state.identities[$0]) } }
        guard let (peer, identity) = known else {
            var dropped = Received.drop("handshake initiation from an unknown peer key")
            dropped.unknownKey = WireGuardKey(bytes: initiatorStatic)
            return dropped
        }
        guard let staticShared = identity.staticShared else {
            return .drop("handshake initiation from a peer key of small order")
        }
        guard let timestamp = noise.decryptAndHash(key: noise.mixKeyForCipher(staticShared),
                                                   message[layout.initiationTimestamp..<layout.initiationMAC1]) else {
            return .drop("handshake initiation whose timestamp does not decrypt")
        }

        // The response (§5.4.3), computed before taking the lock; only the indices wait for it.
        let responderEphemeral = X25519.generatePrivate()
        let responderEphemeralPublic = X25519.publicKey(of: responderEphemeral)
        noise.mixKey(responderEphemeralPublic)
        noise.mixHash(responderEphemeralPublic)
        guard let ee = X25519.sharedSecret(privateKey: responderEphemeral, publicKey: ephemeral),
              let se = X25519.sharedSecret(privateKey: responderEphemeral, publicKey: initiatorStatic) else {
            return .drop("handshake initiation whose keys give a zero shared secret")
        }
        noise.mixKey(ee)
        noise.mixKey(se)
        let empty = noise.encryptAndHash(key: noise.mixPresharedKey(presharedKey), [])
        let keys = noise.transportKeys()
        let remoteIndex = WireGuardProtocol.readLE32(message, at: layout.initiationSender)

        let outcome = state.withLock { state -> Result<UInt32, Dropped> in
            // Removed while this initiation was being checked: as an unknown key's from now on.
            guard !state.peers[peer].removed else {
                return .failure(Dropped("handshake initiation from an unknown peer key"))
            }
            // §5.1: only a timestamp greater than the last accepted one; TAI64N compares byte by byte.
            if let last = state.peers[peer].lastTimestamp, !last.lexicographicallyPrecedes(timestamp) {
                return .failure(Dropped("replayed handshake initiation (timestamp not newer than the last accepted)"))
            }
            let localIndex = Self.freshIndex(in: state.sessions)
            guard let keypair = Keypair(sendKey: keys.responderToInitiator, receiveKey: keys.initiatorToResponder,
                                        localIndex: localIndex, remoteIndex: remoteIndex, created: now) else {
                return .failure(Dropped("out of memory for a new keypair"))
            }
            state.peers[peer].lastTimestamp = timestamp
            // §6.3 as the responder: the new keypair waits as "next"; an older unconfirmed one and the
            // previous one go, the current one stays usable until the new one is confirmed.
            for old in [state.peers[peer].next, state.peers[peer].previous].compactMap({ $0 }) {
                state.sessions[old.localIndex] = nil
            }
            state.peers[peer].previous = nil
            state.peers[peer].next = keypair
            state.sessions[localIndex] = peer
            state.peers[peer].keepaliveDue = nil
            return .success(localIndex)
        }
        let localIndex: UInt32
        switch outcome {
        case .failure(let dropped): return .drop(dropped.reason)
        case .success(let index): localIndex = index
        }

        var response = HandshakeLayout.header(WireGuardProtocol.typeResponse, size: WireGuardProtocol.responseSize)
        WireGuardProtocol.writeLE32(localIndex, into: &response, at: layout.responseSender)
        WireGuardProtocol.writeLE32(remoteIndex, into: &response, at: layout.responseReceiver)
        response.replaceSubrange(layout.responseEphemeral..<(layout.responseEphemeral + 32), with: responderEphemeralPublic)
        response.replaceSubrange(layout.responseEmpty..<layout.responseMAC1, with: empty)
        let responseMAC1 = Blake2s.mac(key: identity.mac1Key, response[0..<layout.responseMAC1])
        response.replaceSubrange(layout.responseMAC1..<(layout.responseMAC1 + 16), with: responseMAC1)
        // mac2 stays zero: this side never sends cookies, so the initiator has none to prove (§5.4.4).
        return Received(replies: [response], peer: peer)
    }

    /// A random 32-bit index not used by any live session (§5.4.2: "sender index").
    private static func freshIndex(in sessions: [UInt32: Int]) -> UInt32 {
        while true {
            var bytes = [UInt8](repeating: 0, count: 4)
            precondition(RAND_bytes(&bytes, 4) == 1, "RAND_bytes failed")
            let index = WireGuardProtocol.readLE32(bytes, at: 0)
            if sessions[index] == nil { return index }
        }
    }

    // MARK: transport data (§5.4.6)

    private func receiveTransport(_ message: [UInt8], now: Double) -> Received {
        let receiver = WireGuardProtocol.readLE32(message, at: 4)
        let found = state.withLock { state -> (Int, Keypair)? in
            guard let peer = state.sessions[receiver] else { return nil }
            let sessions = state.peers[peer]
            guard let keypair = [sessions.current, sessions.next, sessions.previous]
                .compactMap({ $0 }).first(where: { $0.localIndex == receiver }) else { return nil }
            return (peer, keypair)
        }
        guard let (peer, keypair) = found else { return .drop("transport message for an unknown receiver index") }
        guard !keypair.isExpired(now: now) else { return .drop("transport message under an expired session") }
        let plaintext: [UInt8]
        switch keypair.open(message) {
        case .failure(let dropped): return .drop(dropped.reason)
        case .success(let opened): plaintext = opened
        }
        let removed = state.withLock { state -> Bool in
            // Removed while this message was being opened: it is not delivered.
            guard !state.peers[peer].removed else { return true }
            if state.peers[peer].next === keypair {
                // §6.3: the initiator's first message under the new keys confirms them.
                if let previous = state.peers[peer].previous { state.sessions[previous.localIndex] = nil }
                state.peers[peer].previous = state.peers[peer].current
                state.peers[peer].current = keypair
                state.peers[peer].next = nil
                state.peers[peer].lastHandshake = now
            }
            if !plaintext.isEmpty && state.peers[peer].keepaliveDue == nil {
                state.peers[peer].keepaliveDue = now + WireGuardProtocol.keepaliveTimeout
            }
            return false
        }
        guard !removed else { return .drop("transport message for an unknown receiver index") }
        guard !plaintext.isEmpty else { return Received(peer: peer) }
        guard let packet = Self.unpadded(plaintext) else {
            return .drop("decrypted packet is neither IPv4 nor IPv6 of a consistent length", peer: peer)
        }
        return Received(packets: [packet], peer: peer)
    }

    /// The IP packet without the padding (§5.4.6): cut to the IPv4 total length or to 40 plus
    /// the IPv6 payload length; nil when the header says something impossible.
    static func unpadded(_ plaintext: [UInt8]) -> [UInt8]? {
        guard let first = plaintext.first else { return nil }
        let length: Int
        switch first >> 4 {
        case 4:
            guard plaintext.count >= 20 else { return nil }
            length = Int(plaintext[2]) << 8 | Int(plaintext[3])
            guard length >= 20 else { return nil }
        case 6:
            guard plaintext.count >= 40 else { return nil }
            length = 40 + (Int(plaintext[4]) << 8 | Int(plaintext[5]))
        default:
            return nil
        }
        guard length <= plaintext.count else { return nil }
        return length == plaintext.count ? plaintext : Array(plaintext[0..<length])
    }
}
