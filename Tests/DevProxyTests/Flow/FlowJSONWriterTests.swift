@testable import DevProxy
import Foundation
import Testing

/// The hand-written flow JSON must be byte-for-byte what JSONEncoder (sorted keys, slashes
/// unescaped) writes, and decode back to the same flow.
@Suite struct FlowJSONWriterTests {
    @Test(arguments: FlowSamples.all + [Self.everything])
    func matchesJSONEncoderByteForByte(_ flow: Flow) throws {
        let expected = [UInt8](try FlowJSON.encoder().encode(flow))
        #expect(String(decoding: flow.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        #expect(try FlowJSON.decoder().decode(Flow.self, from: Data(flow.jsonBytes)) == flow)
    }

    /// Records are written into one scratch buffer per thread (`FlowJSONWriter.bytes`): a record
    /// past the buffer's kept size (100 KiB here), the small ones after it, and a record written
    /// while another is being written are each what JSONEncoder writes, and the buffer is not kept
    /// at the large record's size.
    @Test func theScratchBufferServesRecordsOfAnySizeAndNesting() throws {
        var large = FlowSamples.get
        large.server.host = String(repeating: "a", count: 100 * 1024) + ".test"
        for flow in [FlowSamples.get, large, FlowSamples.post, large, FlowSamples.tunnel] {
            #expect(flow.jsonBytes == [UInt8](try FlowJSON.encoder().encode(flow)))
        }
        #expect((FlowJSONFragments.current.scratch?.capacity ?? 0) <= FlowJSONWriter.scratchKept)
        var inner: [UInt8] = []
        let outer = FlowJSONWriter.bytes { writer in
            FlowSamples.post.write(to: &writer)
            inner = FlowSamples.get.jsonBytes
        }
        #expect(outer == [UInt8](try FlowJSON.encoder().encode(FlowSamples.post)))
        #expect(inner == [UInt8](try FlowJSON.encoder().encode(FlowSamples.get)))
    }

    /// A connection's records reuse the JSON of the parts they share (`FlowJSONFragments`, one
    /// memo per thread): records whose TLS, server, signer and listener change, change back, or
    /// are equal in other storage must each still be what JSONEncoder writes.
    @Test func repeatedPartsAreReusedOnlyWhenEqual() throws {
        var first = Self.everything
        first.listener = Flow.ListenerInfo(mode: "regular", address: "127.0.0.1:8080")
        var second = first
        second.tls?.upstream?.chain[0].subject = "CN = another"
        second.tls?.client?.alpn = "h2"
        second.server.port += 1
        second.signer?.email = "b@c.d"
        second.listener?.address = "127.0.0.1:8081"
        // Equal to `first`, every string rebuilt at run time: same text, other storage.
        var rebuilt = first
        let fresh = { (text: String) in String(decoding: Array(text.utf8), as: UTF8.self) }
        rebuilt.tls?.client?.sni = first.tls?.client?.sni.map(fresh)
        rebuilt.tls?.upstream?.chain = first.tls?.upstream?.chain.map {
            Flow.ChainCertificate(subject: fresh($0.subject), issuer: fresh($0.issuer), notAfter: fresh($0.notAfter),
                                  pin: fresh($0.pin))
        } ?? []
        rebuilt.server.host = fresh(first.server.host)
        rebuilt.signer?.serial = fresh(first.signer?.serial ?? "")
        rebuilt.listener?.mode = fresh(first.listener?.mode ?? "")
        #expect(rebuilt == first)
        for flow in [first, first, second, first, rebuilt, second, second, rebuilt] {
            let expected = try FlowJSON.encoder().encode(flow)
            #expect(String(decoding: flow.jsonBytes, as: UTF8.self) == String(decoding: expected, as: UTF8.self))
        }
        #expect(first.lineBytes == first.jsonBytes + [UInt8(ascii: "\n")])
    }

    /// The eight-bytes-at-a-time escape scan agrees with a byte-by-byte one for every special
    /// byte at every position of strings up to 40 bytes, and for the bytes next to them.
    @Test func escapeScanFindsEverySpecialByteAtEveryOffset() {
        let naive: ([UInt8]) -> Bool = { $0.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } }
        let probes: [UInt8] = [0x00, 0x01, 0x09, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xC3, 0xFF]
        for length in 1...40 {
            for position in 0..<length {
                for probe in probes {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = probe
                    let scanned = bytes.withUnsafeBufferPointer { FlowJSONWriter.needsEscaping($0) }
                    #expect(scanned == naive(bytes), "length \(length), byte \(probe) at \(position)")
                }
            }
        }
        #expect([UInt8]().withUnsafeBufferPointer { FlowJSONWriter.needsEscaping($0) } == false)
    }

    /// Integers are written digit by digit, without a String; they must read as Swift prints them,
    /// and a record longer than the writer's first allocation must come out whole.
    @Test func integersAndLongRecordsAreWrittenWhole() {
        var writer = FlowJSONWriter(capacity: 8)
        let numbers = [0, 7, -1, 10, 99, 100, -4096, Int.max, Int.min]
        writer.array(numbers) { $0.number($1) }
        let expected = "[" + numbers.map(String.init).joined(separator: ",") + "]"
        #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
        var long = FlowJSONWriter(capacity: 8)
        let text = String(repeating: "0123456789", count: 500)
        long.string(text)
        #expect(String(decoding: long.bytes, as: UTF8.self) == "\"" + text + "\"")
    }

    /// Milliseconds to three places are written from their integer (`FlowJSONWriter.thousandths`);
    /// every number must still read exactly as JSONEncoder writes it, whichever path it took.
    @Test func decimalsAreWrittenAsJSONEncoderWritesThem() throws {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0.001, 0.01, 0.1, 0.5, 0.016, 13.065, 1234.5678, 0.638, -0.25, -13.065, 999.999,
                                1_000_000.001, 999_999_999.999, 1e9 + 0.5, 1.0 / 3, 0.0001, 1e-7, 2.5e-5, 0.1 + 0.2,
                                12.0000001, 1e12 + 0.5, 4.35, 1.005, 2.675, 0.615]
        for _ in 0..<2_000 {
            values.append(Double(Int.random(in: -2_000_000...2_000_000, using: &generator)) / 1000)
            values.append(Double(Int.random(in: 1...999_999_999_999, using: &generator)) / 1000)
            values.append(Double.random(in: 0..<100_000, using: &generator))
        }
        let encoder = JSONEncoder()
        for value in values {
            var writer = FlowJSONWriter(capacity: 8)
            writer.number(value)
            let written = String(decoding: writer.bytes, as: UTF8.self)
            #expect(written == String(decoding: try encoder.encode(value), as: UTF8.self), "\(value)")
            #expect(Double(written) == value, "\(value) read back from \(written)")
        }
        #expect(FlowJSONWriter.thousandths(13.065) == 13_065)
        #expect(FlowJSONWriter.thousandths(1.0 / 3) == nil)
        #expect(FlowJSONWriter.thousandths(12) == nil)
    }

    /// Every optional field set, and strings that need escaping.
    static let everything: Flow = {
        var flow = FlowSamples.get
        flow.error = Flow.FlowError(kind: "upstream_closed", message: "quote \" backslash \\ slash / tab \t nl \n cr \r \u{01} ünïcödé 😀", alert: "unknown_ca")
        flow.insecureUpstream = true
        flow.persona = "unpinned"
        flow.signer = Flow.SignerInfo(serial: "abc", email: "a@b.c")
        flow.timings = Flow.Timings(connect: 0.638, tls: 12, send: -1, wait: 1234.5678, receive: 0.001)
        flow.tls = Flow.TLSInfo(client: .init(sni: "a.b", version: "TLSv1.3", cipher: "X", alpn: nil),
                                upstream: .init(version: "TLSv1.2", cipher: "Y", alpn: "http/1.1", verified: false, verifyError: "self-signed certificate",
                                                chain: [.init(subject: "CN = a", issuer: "CN = b", notAfter: "2030-01-01T00:00:00Z", pin: "sha256/x+y/z=")]))
        flow.websocket = [.init(direction: "client_to_server", opcode: "text", length: 5, text: "hello", base64: nil),
                          .init(direction: "server_to_client", opcode: "binary", length: 70000, text: nil, base64: "AAEC",
                                truncated: true)]
        flow.tunnel = Flow.TunnelInfo(sni: nil, bytesFromClient: 10, bytesFromServer: 20, reason: "passthrough rule *.x")
        flow.response?.body = Flow.Body(size: 3, sha256: "ff", text: nil, base64: "AAA=", truncated: true, decoded: "gzip")
        flow.request?.body = Flow.Body(size: 2, sha256: "ee", text: "hi", base64: nil, truncated: false, decoded: nil,
                                       decodeError: "unknown content coding compress: kept as sent")
        return flow
    }()
}
