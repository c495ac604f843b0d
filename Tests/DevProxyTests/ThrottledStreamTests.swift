@testable import DevProxy
import Testing

/// `HTTP2RequestFrames`, which tells an HTTP/2 client's requests (HEADERS, DATA) from the frames
/// that keep a response going (WINDOW_UPDATE, PING, SETTINGS): whole, one byte at a time, and with
/// the connection preface read before it (`early`).
struct ThrottledStreamTests {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// A frame of `type` with `length` payload bytes (RFC 9113 §4.1), stream 1.
    static func frame(type: UInt8, length: Int) -> [UInt8] {
        [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, 0, 0, 0, 0, 1]
            + [UInt8](repeating: 0xAB, count: length)
    }

    static let settings = frame(type: 0x4, length: 12)
    static let windowUpdate = frame(type: 0x8, length: 4)
    static let ping = frame(type: 0x6, length: 8)
    static let headers = frame(type: 0x1, length: 40)
    static let data = frame(type: 0x0, length: 70_000)

    private func scan(_ frames: inout HTTP2RequestFrames, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { frames.scan($0) }
    }

    @Test func onlyHeadersAndDataMakeARequest() {
        var frames = HTTP2RequestFrames()
        #expect(!scan(&frames, Self.preface + Self.settings))
        #expect(!scan(&frames, Self.windowUpdate + Self.ping))
        #expect(scan(&frames, Self.windowUpdate + Self.headers))
        #expect(!scan(&frames, Self.settings))
        // A DATA frame longer than a read: every read of its payload is part of the request.
        #expect(scan(&frames, Array(Self.data[0..<20_000])))
        #expect(scan(&frames, Array(Self.data[20_000...])))
        #expect(!scan(&frames, Self.ping))
    }

    @Test func oneByteAtATime() {
        var frames = HTTP2RequestFrames()
        let quiet = Self.preface + Self.settings + Self.windowUpdate + Self.ping
        #expect(quiet.allSatisfy { !scan(&frames, [$0]) })
        // A frame is known from its ninth byte, the end of its header: from there on, a request.
        #expect(Self.headers[0..<8].allSatisfy { !scan(&frames, [$0]) })
        #expect(Self.headers[8...].allSatisfy { scan(&frames, [$0]) })
        // A PING split across reads: its first byte is a new frame's header, no request.
        #expect(Self.ping.allSatisfy { !scan(&frames, [$0]) })
    }

    @Test func thePrefaceReadBeforeIsSkipped() {
        // h2 without TLS: the preface and the first SETTINGS came in `early`, before the stream.
        var frames = HTTP2RequestFrames()
        #expect(!scan(&frames, Array(Self.preface[0..<10])))
        #expect(!scan(&frames, Array(Self.preface[10...]) + Array(Self.settings[0..<5])))
        #expect(!scan(&frames, Array(Self.settings[5...])))
        #expect(scan(&frames, Self.headers))
    }

    /// One device's connections take turns in its bucket: each piece is due after the pieces
    /// taken before it, whoever took them; a new setting starts the bucket again, full.
    @Test func aSharedBucketQueuesItsTakers() {
        let bucket = SharedBucket()
        let burst = Double(ThrottledLink.burst)
        #expect(bucket.reserve(burst, rate: burst, generation: 1, now: 100) == 100)
        #expect(bucket.reserve(burst, rate: burst, generation: 1, now: 100) == 101)
        #expect(bucket.reserve(burst, rate: burst, generation: 1, now: 100.5) == 102)
        // Bytes taken ahead but not read are given back.
        bucket.take(-burst, rate: burst, generation: 1, now: 100.5)
        #expect(bucket.reserve(burst / 4, rate: burst, generation: 1, now: 100.5) == 101.25)
        // Upload: what the bucket holds, the least when it is in debt.
        #expect(bucket.reserve(upTo: 2 * burst, least: 100, rate: burst, generation: 1, now: 103).amount == burst)
        let least = bucket.reserve(upTo: burst, least: 100, rate: burst, generation: 1, now: 103)
        #expect(least.amount == 100 && least.due == 103 + 100 / burst)
        #expect(bucket.reserve(burst, rate: 2 * burst, generation: 2, now: 103) == 103)
        #expect(bucket.reserve(burst, rate: 2 * burst, generation: 2, now: 103) == 103.5)
    }

    /// A device's buckets are one per client address while its connections hold them, and the
    /// map of them stays bounded by the devices connected now.
    @Test func devicesGoWithTheirLastConnection() {
        let devices = ThrottleDevices()
        var phone: ThrottleDevice? = devices.device(for: "10.0.0.2")
        #expect(devices.device(for: "10.0.0.2") === phone)
        #expect(devices.device(for: "10.0.0.3") !== phone)
        #expect(devices.live == 1)
        phone = nil
        #expect(devices.live == 0)
        for index in 0..<1000 { _ = devices.device(for: "10.1.\(index / 256).\(index % 256)") }
        #expect(devices.entries <= 65)
    }
}
