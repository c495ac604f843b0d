/// Why a datagram was not accepted: the one line `WireGuardResponder.Received.dropped` carries.
struct Dropped: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The Noise state both sides carry through the handshake (whitepaper §5.4): the chaining key C
/// and the hash H.
struct SymmetricState {
    var chainingKey: [UInt8]
    var hash: [UInt8]

    /// C = HASH(CONSTRUCTION), H = HASH(C ‖ IDENTIFIER) then H = HASH(H ‖ S_pub_r), as §5.4.2 starts both sides.
    init(responderStatic: [UInt8]) {
        chainingKey = WireGuardProtocol.initialChainingKey
        hash = Blake2s.hash(WireGuardProtocol.initialHash, responderStatic)
    }

    mutating func mixHash(_ data: [UInt8]) { hash = Blake2s.hash(hash, data) }

    /// C = KDF1(C, input).
    mutating func mixKey(_ input: [UInt8]) { chainingKey = Blake2s.kdf(1, key: chainingKey, input)[0] }

    /// (C, κ) = KDF2(C, input); returns κ.
    mutating func mixKeyForCipher(_ input: [UInt8]) -> [UInt8] {
        let outputs = Blake2s.kdf(2, key: chainingKey, input)
        chainingKey = outputs[0]
        return outputs[1]
    }

    /// (C, τ, κ) = KDF3(C, Q); H = HASH(H ‖ τ); returns κ (the psk step of §5.4.3).
    mutating func mixPresharedKey(_ presharedKey: [UInt8]) -> [UInt8] {
        let outputs = Blake2s.kdf(3, key: chainingKey, presharedKey)
        chainingKey = outputs[0]
        mixHash(outputs[1])
        return outputs[2]
    }

    /// msg = AEAD(κ, 0, plaintext, H); H = HASH(H ‖ msg).
    mutating func encryptAndHash(key: [UInt8], _ plaintext: [UInt8]) -> [UInt8] {
        let sealed = ChaChaPoly.seal(key: key, plaintext, aad: hash)
        mixHash(sealed)
        return sealed
    }

    /// The inverse of `encryptAndHash`; nil when the tag does not authenticate.
    mutating func decryptAndHash(key: [UInt8], _ sealed: ArraySlice<UInt8>) -> [UInt8]? {
        guard let plaintext = ChaChaPoly.open(key: key, sealed, aad: hash) else { return nil }
        mixHash(Array(sealed))
        return plaintext
    }

    /// The transport keys of §5.4.5: (T_i→r, T_r→i) = KDF2(C, ε).
    func transportKeys() -> (initiatorToResponder: [UInt8], responderToInitiator: [UInt8]) {
        let outputs = Blake2s.kdf(2, key: chainingKey, [])
        return (outputs[0], outputs[1])
    }
}

/// The byte layouts of the handshake messages (§5.4.2, §5.4.3), all little-endian indices.
enum HandshakeLayout {
    // Initiation: type ‖ reserved(3) ‖ sender(4) ‖ ephemeral(32) ‖ static(32+16) ‖ timestamp(12+16) ‖ mac1 ‖ mac2.
    static let initiationSender = 4
    static let initiationEphemeral = 8
    static let initiationStatic = 40
    static let initiationTimestamp = 88
    static let initiationMAC1 = 116
    // Response: type ‖ reserved(3) ‖ sender(4) ‖ receiver(4) ‖ ephemeral(32) ‖ empty(0+16) ‖ mac1 ‖ mac2.
    static let responseSender = 4
    static let responseReceiver = 8
    static let responseEphemeral = 12
    static let responseEmpty = 44
    static let responseMAC1 = 60

    /// The key of mac1 for messages sent to the holder of `publicKey`: HASH(LABEL_MAC1 ‖ S_pub) (§5.4.4).
    static func mac1Key(for publicKey: [UInt8]) -> [UInt8] { Blake2s.hash(WireGuardProtocol.labelMAC1, publicKey) }

    /// The first four bytes of a message of `type`: the type and three zero bytes.
    static func header(_ type: UInt8, size: Int) -> [UInt8] {
        var message = [UInt8](repeating: 0, count: size)
        message[0] = type
        return message
    }
}
