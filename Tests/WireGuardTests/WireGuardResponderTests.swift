import Foundation
import Testing
@testable import WireGuard

/// The responder against the test initiator, sans-IO: handshakes, data, rotation, replay and garbage.
@Suite struct WireGuardResponderTests {
    let serverKey = WireGuardKey.generatePrivate()

    /// A responder, an initiator it knows and a completed, confirmed handshake at time `now`.
    func connected(now: Double = 100) throws -> (WireGuardResponder, WireGuardInitiator) {
        let initiator = WireGuardInitiator(responder: serverKey.publicKey)
        let responder = WireGuardResponder(privateKey: serverKey, peers: [WireGuardKey.generatePrivate().publicKey, initiator.key])
        let answer = responder.receive(initiator.initiation(), now: now)
        #expect(answer.dropped == nil && answer.peer == 1 && answer.replies.count == 1)
        #expect(answer.replies.first?.count == 92)
        #expect(initiator.consume(response: try #require(answer.replies.first)))
        #expect(responder.seal(ipv4Packet(size: 40), peer: 1, now: now) == nil, "no data before the initiator confirms")
        let confirmation = responder.receive(try #require(initiator.keypair?.seal([])), now: now)
        #expect(confirmation.dropped == nil && confirmation.peer == 1 && confirmation.packets.isEmpty)
        return (responder, initiator)
    }

    @Test func handshakeThenDataBothWays() throws {
        let (responder, initiator) = try connected()
        #expect(responder.lastHandshake(peer: 1) == 100)
        #expect(responder.lastHandshake(peer: 0) == nil)
        let packet = ipv4Packet(size: 21)
        let received = responder.receive(try #require(initiator.keypair?.seal(packet)), now: 101)
        #expect(received.dropped == nil && received.peer == 1)
        #expect(received.packets == [packet], "padding to 32 bytes cut back to the IPv4 total length")
        let reply = ipv4Packet(size: 60, marker: 7)
        let sealed = try #require(responder.seal(reply, peer: 1, now: 101))
        #expect(sealed.count == 16 + 64 + 16, "padded to a multiple of 16")
        let opened = try #require(try? initiator.keypair?.open(sealed).get())
        #expect(Array(opened.prefix(60)) == reply && opened.dropFirst(60).allSatisfy { $0 == 0 })
        #expect(responder.seal(reply, peer: 0, now: 101) == nil && responder.seal(reply, peer: 9, now: 101) == nil)
    }

    @Test func keyRotationKeepsThePreviousKeypairUntilItExpires() throws {
        let (responder, initiator) = try connected(now: 100)
        let first = try #require(initiator.keypair)
        let answer = responder.receive(initiator.initiation(unixTime: Date().timeIntervalSince1970 + 1), now: 220)
        #expect(answer.dropped == nil)
        #expect(initiator.consume(response: try #require(answer.replies.first)))
        let second = try #require(initiator.keypair)
        // Until the initiator uses the new keys, the responder still sends under the old ones.
        let before = try #require(responder.seal(ipv4Packet(size: 20), peer: 1, now: 221))
        #expect((try? first.open(before).get()) != nil && (try? second.open(before).get()) == nil)
        #expect(responder.receive(try #require(first.seal(ipv4Packet(size: 20))), now: 221).dropped == nil)
        #expect(responder.receive(try #require(second.seal(ipv4Packet(size: 20))), now: 222).dropped == nil)
        #expect(responder.lastHandshake(peer: 1) == 222)
        let after = try #require(responder.seal(ipv4Packet(size: 20), peer: 1, now: 222))
        #expect((try? second.open(after).get()) != nil)
        // The previous keypair still works for receiving until REJECT_AFTER_TIME after it was made.
        #expect(responder.receive(try #require(first.seal(ipv4Packet(size: 20))), now: 279).dropped == nil)
        #expect(responder.receive(try #require(first.seal(ipv4Packet(size: 20))), now: 280).dropped?.contains("expired") == true)
        // A third handshake, confirmed, retires the first keypair altogether.
        let third = responder.receive(initiator.initiation(unixTime: Date().timeIntervalSince1970 + 2), now: 300)
        #expect(initiator.consume(response: try #require(third.replies.first)))
        #expect(responder.receive(try #require(initiator.keypair?.seal([])), now: 300).dropped == nil)
        #expect(responder.receive(try #require(first.seal([])), now: 300).dropped?.contains("unknown receiver index") == true)
        #expect(responder.receive(try #require(second.seal([])), now: 300).dropped == nil)
    }

    @Test func aReplayedInitiationIsDropped() throws {
        let initiator = WireGuardInitiator(responder: serverKey.publicKey)
        let responder = WireGuardResponder(privateKey: serverKey, peers: [initiator.key])
        let now = Date().timeIntervalSince1970
        let initiation = initiator.initiation(unixTime: now)
        #expect(responder.receive(initiation, now: 1).dropped == nil)
        let replayed = responder.receive(initiation, now: 2)
        #expect(replayed.dropped?.contains("replayed handshake initiation") == true && replayed.peer == nil)
        #expect(replayed.replies.isEmpty)
        #expect(responder.receive(initiator.initiation(unixTime: now - 1), now: 3).dropped?.contains("replayed") == true)
        #expect(responder.receive(initiator.initiation(unixTime: now + 0.001), now: 4).dropped == nil)
    }

    @Test func transportCountersAreCheckedAgainstReplayWithReorderingAllowed() throws {
        let (responder, initiator) = try connected()
        let keypair = try #require(initiator.keypair)
        let messages = (0..<6).map { _ in keypair.seal(ipv4Packet(size: 20))! }
        for index in [0, 2, 1, 5, 3] { #expect(responder.receive(messages[index], now: 101).dropped == nil) }
        #expect(responder.receive(messages[2], now: 101).dropped?.contains("replayed") == true)
        #expect(responder.receive(messages[4], now: 101).dropped == nil, "late but within the window")
        #expect(responder.receive(messages[4], now: 101).dropped?.contains("replayed") == true)
        let late = keypair.seal(ipv4Packet(size: 20))!
        for _ in 0..<2100 { _ = keypair.seal([]) }
        #expect(responder.receive(keypair.seal([])!, now: 102).dropped == nil)
        #expect(responder.receive(late, now: 102).dropped?.contains("too old") == true)
    }

    @Test func anUnknownPeerKeyIsDropped() throws {
        let initiator = WireGuardInitiator(responder: serverKey.publicKey)
        let responder = WireGuardResponder(privateKey: serverKey, peers: [WireGuardKey.generatePrivate().publicKey])
        let answer = responder.receive(initiator.initiation(), now: 1)
        #expect(answer.dropped?.contains("unknown peer") == true && answer.peer == nil && answer.replies.isEmpty)
    }

    /// A key added while running connects: the dropped initiation names its key, and the same
    /// datagram handed in again after `add(peers:)` is answered; the earlier peers keep their
    /// indices, and a key already known is not added twice.
    @Test func aPeerAddedWhileRunningConnects() throws {
        let initiator = WireGuardInitiator(responder: serverKey.publicKey)
        let first = WireGuardKey.generatePrivate().publicKey
        let responder = WireGuardResponder(privateKey: serverKey, peers: [first])
        let initiation = initiator.initiation()
        let refused = responder.receive(initiation, now: 1)
        #expect(refused.unknownKey?.bytes == initiator.key.bytes && refused.peer == nil && refused.replies.isEmpty)
        #expect(responder.add(peers: [first, initiator.key, initiator.key]) == 1 && responder.peerCount == 2)
        let answer = responder.receive(initiation, now: 1)
        #expect(answer.dropped == nil && answer.peer == 1 && answer.unknownKey == nil && answer.replies.count == 1)
        #expect(initiator.consume(response: try #require(answer.replies.first)))
        #expect(responder.receive(try #require(initiator.keypair?.seal([])), now: 2).peer == 1)
        #expect(responder.lastHandshake(peer: 1) == 2 && responder.lastHandshake(peer: 0) == nil
                && responder.lastHandshake(peer: 2) == nil)
        #expect(responder.seal(ipv4Packet(size: 40), peer: 1, now: 2) != nil && responder.seal(ipv4Packet(size: 40), peer: 2, now: 2) == nil)
    }

    /// A peer removed while connected is served no more: its transport messages, under the current
    /// and the previous keypair, are unknown receiver indices, nothing is sealed for it and no
    /// keepalive is due, and its next initiation is refused as an unknown key's; the other peers
    /// keep their indices and sessions, and a second removal says so.
    @Test func aRemovedPeerIsServedNoMore() throws {
        let (responder, initiator) = try connected(now: 100)
        let other = WireGuardInitiator(responder: serverKey.publicKey)
        #expect(responder.add(peers: [other.key]) == 1)
        let answer = responder.receive(other.initiation(), now: 100)
        #expect(other.consume(response: try #require(answer.replies.first)))
        #expect(responder.receive(try #require(other.keypair?.seal([])), now: 100).peer == 2)
        #expect(responder.receive(try #require(initiator.keypair?.seal(ipv4Packet(size: 20))), now: 101).packets.count == 1)
        let pending = try #require(initiator.keypair?.seal(ipv4Packet(size: 20)))
        #expect(responder.remove(peer: 1) && responder.isRemoved(peer: 1) && !responder.isRemoved(peer: 2))
        #expect(!responder.remove(peer: 1) && !responder.remove(peer: 9))
        let late = responder.receive(pending, now: 102)
        #expect(late.dropped?.contains("unknown receiver index") == true && late.peer == nil && late.packets.isEmpty, "\(late)")
        #expect(responder.seal(ipv4Packet(size: 20), peer: 1, now: 102) == nil)
        #expect(responder.keepalives(now: 200).allSatisfy { $0.peer != 1 })
        let again = responder.receive(initiator.initiation(unixTime: Date().timeIntervalSince1970 + 5), now: 103)
        #expect(again.dropped?.contains("unknown peer key") == true && again.replies.isEmpty
                && again.unknownKey?.bytes == initiator.key.bytes, "\(again)")
        #expect(responder.peerCount == 3 && responder.lastHandshake(peer: 1) == nil)
        #expect(responder.receive(try #require(other.keypair?.seal(ipv4Packet(size: 20))), now: 103).packets.count == 1)
        #expect(responder.seal(ipv4Packet(size: 20), peer: 2, now: 103) != nil)
    }

    @Test func aBadMAC1IsDropped() throws {
        let initiator = WireGuardInitiator(responder: serverKey.publicKey)
        let responder = WireGuardResponder(privateKey: serverKey, peers: [initiator.key])
        for offset in [4, 50, 100, 120] {
            var initiation = initiator.initiation()
            initiation[offset] ^= 0x40
            #expect(responder.receive(initiation, now: 1).dropped == "bad mac1 on handshake initiation")
        }
        // Initiations for another responder carry a mac1 keyed with that responder's key.
        let elsewhere = WireGuardInitiator(responder: WireGuardKey.generatePrivate().publicKey)
        #expect(responder.receive(elsewhere.initiation(), now: 1).dropped == "bad mac1 on handshake initiation")
    }

    @Test func aCorruptedTagIsDropped() throws {
        let (responder, initiator) = try connected()
        var message = try #require(initiator.keypair?.seal(ipv4Packet(size: 20)))
        message[message.count - 1] ^= 1
        let answer = responder.receive(message, now: 101)
        #expect(answer.dropped?.contains("bad authentication tag") == true && answer.peer == nil && answer.packets.isEmpty)
        var body = try #require(initiator.keypair?.seal(ipv4Packet(size: 20)))
        body[20] ^= 0x80
        #expect(responder.receive(body, now: 101).dropped?.contains("bad authentication tag") == true)
    }

    @Test func garbageOfEveryLengthIsDroppedWithAReason() throws {
        let (responder, initiator) = try connected()
        let valid = initiator.initiation()
        let data = try #require(initiator.keypair?.seal(ipv4Packet(size: 100)))
        for length in 0...200 {
            var random = [UInt8](repeating: 0, count: length)
            for i in random.indices { random[i] = UInt8.random(in: 0...255) }
            var candidates = [random, Array(valid.prefix(length)), Array(data.prefix(length))]
            for type: UInt8 in 1...4 where length >= 4 {
                var typed = random
                typed[0] = type
                typed[1] = 0; typed[2] = 0; typed[3] = 0
                candidates.append(typed)
            }
            for candidate in candidates where candidate != valid && candidate != data {
                let answer = responder.receive(candidate, now: 101)
                #expect(answer.dropped?.isEmpty == false, "length \(length)")
                #expect(answer.replies.isEmpty && answer.packets.isEmpty)
            }
        }
    }

    @Test func paddingIsCutAndNonIPPacketsAreDropped() throws {
        let (responder, initiator) = try connected()
        var ipv6 = [UInt8](repeating: 0, count: 45)
        ipv6[0] = 0x60
        ipv6[5] = 5
        #expect(responder.receive(initiator.keypair!.seal(ipv6)!, now: 101).packets == [ipv6])
        let notIP = responder.receive(initiator.keypair!.seal([0x50, 1, 2, 3])!, now: 101)
        #expect(notIP.dropped?.contains("neither IPv4 nor IPv6") == true && notIP.packets.isEmpty)
        var lying = ipv4Packet(size: 20)
        lying[3] = 200
        #expect(responder.receive(initiator.keypair!.seal(lying)!, now: 101).dropped != nil)
    }

    @Test func passiveKeepalivesFollowDataReceivedWithNothingSent() throws {
        let (responder, initiator) = try connected(now: 100)
        #expect(responder.keepalives(now: 200).isEmpty, "a keepalive received asks for none")
        _ = responder.receive(initiator.keypair!.seal(ipv4Packet(size: 20))!, now: 101)
        #expect(responder.keepalives(now: 110.9).isEmpty)
        let due = responder.keepalives(now: 111)
        #expect(due.count == 1 && due.first?.peer == 1)
        #expect((try? initiator.keypair!.open(due[0].datagram).get()) == [])
        #expect(responder.keepalives(now: 130).isEmpty)
        _ = responder.receive(initiator.keypair!.seal(ipv4Packet(size: 20))!, now: 131)
        _ = responder.seal(ipv4Packet(size: 20), peer: 1, now: 132)
        #expect(responder.keepalives(now: 150).isEmpty, "something was sent")
    }

    @Test func aSessionExpiresAfterRejectAfterTime() throws {
        let (responder, initiator) = try connected(now: 100)
        #expect(responder.seal(ipv4Packet(size: 20), peer: 1, now: 279.9) != nil)
        #expect(responder.seal(ipv4Packet(size: 20), peer: 1, now: 280) == nil)
        #expect(responder.receive(initiator.keypair!.seal([])!, now: 280).dropped == "transport message under an expired session")
        #expect(responder.keepalives(now: 639).isEmpty)
        #expect(responder.receive(initiator.keypair!.seal([])!, now: 639).dropped == "transport message under an expired session")
        #expect(responder.keepalives(now: 640).isEmpty)
        #expect(responder.receive(initiator.keypair!.seal([])!, now: 640).dropped?.contains("unknown receiver index") == true)
    }

    @Test func sealingAndReceivingOnTwoThreadsAtOnce() async throws {
        let (responder, initiator) = try connected()
        let inbound = (0..<3000).map { _ in initiator.keypair!.seal(ipv4Packet(size: 100))! }
        async let received = Task.detached {
            inbound.reduce(0) { $0 + (responder.receive($1, now: 101).packets.count) }
        }.value
        async let sealed = Task.detached {
            (0..<3000).compactMap { _ in responder.seal(ipv4Packet(size: 100), peer: 1, now: 101) }
        }.value
        let (count, outbound) = await (received, sealed)
        #expect(count == 3000 && outbound.count == 3000)
        #expect(outbound.allSatisfy { (try? initiator.keypair!.open($0).get())?.count == 112 })
    }

    @Test func aPresharedKeyMustMatch() throws {
        let psk = WireGuardKey.generatePrivate()
        let good = WireGuardInitiator(responder: serverKey.publicKey, presharedKey: psk)
        let bad = WireGuardInitiator(responder: serverKey.publicKey)
        let responder = WireGuardResponder(privateKey: serverKey, peers: [good.key, bad.key], presharedKey: psk)
        #expect(good.consume(response: responder.receive(good.initiation(), now: 1).replies[0]))
        #expect(!bad.consume(response: responder.receive(bad.initiation(), now: 1).replies[0]))
    }
}

/// An IPv4 header of `size` bytes in total (its total length field set), then `marker` bytes.
func ipv4Packet(size: Int, marker: UInt8 = 0xab) -> [UInt8] {
    var packet = [UInt8](repeating: marker, count: size)
    packet[0] = 0x45
    packet[2] = UInt8(size >> 8)
    packet[3] = UInt8(size & 0xff)
    return packet
}
