import Synchronization

/// One secure session's transport keys (whitepaper §5.4.5–§5.4.6): the sending cipher and its
/// counter, the receiving cipher and its replay window, each behind a lock of its own so sealing
/// and opening on two threads do not wait for each other.
final class Keypair: Sendable {
    /// The index the peer puts in the receiver field of what it sends under this keypair.
    let localIndex: UInt32
    /// The index this side puts in the receiver field of what it sends.
    let remoteIndex: UInt32
    /// When the handshake that made it completed on this side.
    let created: Double

    private struct Sending {
        let cipher: ChaChaPoly
        var counter: UInt64 = 0
    }

    private struct Receiving {
        let cipher: ChaChaPoly
        var window = ReplayWindow()
    }

    private let sending: Mutex<Sending>
    private let receiving: Mutex<Receiving>

    init?(sendKey: [UInt8], receiveKey: [UInt8], localIndex: UInt32, remoteIndex: UInt32, created: Double) {
        guard let sender = ChaChaPoly(key: sendKey, encrypting: true),
              let receiver = ChaChaPoly(key: receiveKey, encrypting: false) else { return nil }
        sending = Mutex(Sending(cipher: sender))
        receiving = Mutex(Receiving(cipher: receiver))
        self.localIndex = localIndex
        self.remoteIndex = remoteIndex
        self.created = created
    }

    /// Past REJECT_AFTER_TIME (§6.1): neither side may use it any more.
    func isExpired(now: Double) -> Bool { now - created >= WireGuardProtocol.rejectAfterTime }

    /// A transport message carrying `packet` padded with zeros to a multiple of 16 bytes (§5.4.6),
    /// or nil when the counter reached REJECT_AFTER_MESSAGES.
    func seal(_ packet: [UInt8]) -> [UInt8]? {
        let header = WireGuardProtocol.transportHeaderSize
        let padded = (packet.count + 15) & ~15
        var message = [UInt8](repeating: 0, count: header + padded + ChaChaPoly.tagSize)
        message[0] = WireGuardProtocol.typeTransport
        WireGuardProtocol.writeLE32(remoteIndex, into: &message, at: 4)
        message.withUnsafeMutableBufferPointer { buffer in
            packet.withUnsafeBufferPointer { source in
                guard let base = source.baseAddress else { return }
                (buffer.baseAddress! + header).update(from: base, count: source.count)
            }
        }
        return sending.withLock { state -> [UInt8]? in
            guard state.counter < WireGuardProtocol.rejectAfterMessages else { return nil }
            let counter = state.counter
            state.counter += 1
            WireGuardProtocol.writeLE64(counter, into: &message, at: 8)
            guard state.cipher.seal(counter: counter, &message, range: header..<(header + padded)) else { return nil }
            return message
        }
    }

    /// The plaintext of a transport message addressed to this keypair (padding still on), or why it was dropped.
    func open(_ message: [UInt8]) -> Result<[UInt8], Dropped> {
        let counter = WireGuardProtocol.readLE64(message, at: 8)
        guard counter < WireGuardProtocol.rejectAfterMessages else {
            return .failure(Dropped("counter \(counter) at or past REJECT_AFTER_MESSAGES"))
        }
        return receiving.withLock { state in
            guard state.window.wouldAccept(counter) else {
                return .failure(Dropped("replayed or too old counter \(counter)"))
            }
            guard let plaintext = state.cipher.open(counter: counter, message,
                                                    range: WireGuardProtocol.transportHeaderSize..<message.count) else {
                return .failure(Dropped("bad authentication tag on transport message (counter \(counter))"))
            }
            guard state.window.accept(counter) else { return .failure(Dropped("replayed counter \(counter)")) }
            return .success(plaintext)
        }
    }
}
