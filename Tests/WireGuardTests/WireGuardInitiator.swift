import Foundation
@testable import WireGuard

/// A minimal WireGuard initiator for the responder's tests: builds initiations (§5.4.2), consumes
/// responses (§5.4.3) and keeps the resulting keypairs. No timers, no retries.
final class WireGuardInitiator {
    let privateKey: [UInt8]
    let publicKey: [UInt8]
    let responderPublic: [UInt8]
    let presharedKey: [UInt8]
    private var pending: (noise: SymmetricState, ephemeral: [UInt8], index: UInt32)?
    /// The keypair of the latest completed handshake.
    private(set) var keypair: Keypair?

    init(privateKey: WireGuardKey = .generatePrivate(), responder: WireGuardKey, presharedKey: WireGuardKey? = nil) {
        self.privateKey = privateKey.bytes
        publicKey = privateKey.publicKey.bytes
        responderPublic = responder.bytes
        self.presharedKey = presharedKey?.bytes ?? [UInt8](repeating: 0, count: 32)
    }

    var key: WireGuardKey { WireGuardKey(bytes: publicKey)! }

    /// A handshake initiation message carrying `unixTime` as its TAI64N timestamp.
    func initiation(unixTime: Double = Date().timeIntervalSince1970) -> [UInt8] {
        var noise = SymmetricState(responderStatic: responderPublic)
        let ephemeral = X25519.generatePrivate()
        let ephemeralPublic = X25519.publicKey(of: ephemeral)
        let index = UInt32.random(in: 0...UInt32.max)
        var message = HandshakeLayout.header(WireGuardProtocol.typeInitiation, size: WireGuardProtocol.initiationSize)
        WireGuardProtocol.writeLE32(index, into: &message, at: HandshakeLayout.initiationSender)
        noise.mixKey(ephemeralPublic)
        noise.mixHash(ephemeralPublic)
        message.replaceSubrange(8..<40, with: ephemeralPublic)
        let es = X25519.sharedSecret(privateKey: ephemeral, publicKey: responderPublic)!
        message.replaceSubrange(40..<88, with: noise.encryptAndHash(key: noise.mixKeyForCipher(es), publicKey))
        let ss = X25519.sharedSecret(privateKey: privateKey, publicKey: responderPublic)!
        let timestamp = WireGuardProtocol.tai64n(unixTime: unixTime)
        message.replaceSubrange(88..<116, with: noise.encryptAndHash(key: noise.mixKeyForCipher(ss), timestamp))
        let mac1 = Blake2s.mac(key: HandshakeLayout.mac1Key(for: responderPublic), message[0..<116])
        message.replaceSubrange(116..<132, with: mac1)
        pending = (noise, ephemeral, index)
        return message
    }

    /// Consumes the responder's answer to the latest initiation; true when it completes the handshake.
    @discardableResult
    func consume(response message: [UInt8]) -> Bool {
        guard let (start, ephemeral, index) = pending, message.count == WireGuardProtocol.responseSize,
              message[0] == WireGuardProtocol.typeResponse,
              WireGuardProtocol.readLE32(message, at: HandshakeLayout.responseReceiver) == index,
              Blake2s.mac(key: HandshakeLayout.mac1Key(for: publicKey), message[0..<60]) == Array(message[60..<76])
        else { return false }
        var noise = start
        let responderEphemeral = Array(message[12..<44])
        noise.mixKey(responderEphemeral)
        noise.mixHash(responderEphemeral)
        guard let ee = X25519.sharedSecret(privateKey: ephemeral, publicKey: responderEphemeral),
              let se = X25519.sharedSecret(privateKey: privateKey, publicKey: responderEphemeral) else { return false }
        noise.mixKey(ee)
        noise.mixKey(se)
        guard noise.decryptAndHash(key: noise.mixPresharedKey(presharedKey), message[44..<60]) == [] else { return false }
        let keys = noise.transportKeys()
        keypair = Keypair(sendKey: keys.initiatorToResponder, receiveKey: keys.responderToInitiator, localIndex: index,
                          remoteIndex: WireGuardProtocol.readLE32(message, at: HandshakeLayout.responseSender), created: 0)
        pending = nil
        return keypair != nil
    }
}
