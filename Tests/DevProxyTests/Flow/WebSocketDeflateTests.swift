import CertAuthority
@testable import DevProxy
import Foundation
import HTTP1
import Testing
import TestSupport

/// permessage-deflate (RFC 7692): Chromium offers it on every WebSocket and many servers accept
/// it; the flow shows each compressed message inflated, as the app reads it, with its size on
/// the wire beside it. The frames themselves are relayed untouched.
@Suite struct WebSocketDeflateTests {
    /// hypercorn (wsproto) as the server, compressing its answers; a Python client that
    /// compresses with one zlib context across messages (so the second refers back into the
    /// first) and sends one message in two frames.
    @Test func compressedMessagesAreRecordedInflatedBothWays() throws {
        let origin = try HTTP2Origin(.hypercornBoth)
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = try! Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        })
        let script = proxy.pythonTunnel(to: origin.port) + """

        import zlib
        key = base64.b64encode(os.urandom(16))
        t.sendall(b"GET /ws HTTP/1.1\\r\\nHost: localhost\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                  b"Sec-WebSocket-Key: " + key + b"\\r\\nSec-WebSocket-Version: 13\\r\\n"
                  b"Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\\r\\n\\r\\n")
        head = b""
        while b"\\r\\n\\r\\n" not in head: head += t.recv(1)
        assert b"permessage-deflate" in head.lower(), head
        mask = b"abcd"
        def frame(first, data):
            assert len(data) < 126
            return bytes([first, 0x80 | len(data)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        compressor = zlib.compressobj(wbits=-15)
        def deflate(text):
            data = compressor.compress(text.encode()) + compressor.flush(zlib.Z_SYNC_FLUSH)
            assert data.endswith(b"\\x00\\x00\\xff\\xff")
            return data[:-4]
        inflater = zlib.decompressobj(wbits=-15)
        buffer = b""
        def answer():
            global buffer
            while len(buffer) < 2 or len(buffer) < 2 + (buffer[1] & 0x7F): buffer += t.recv(4096)
            length = buffer[1] & 0x7F
            assert length < 126 and buffer[0] & 0x40, buffer
            data, buffer = buffer[2:2 + length], buffer[2 + length:]
            return inflater.decompress(data + b"\\x00\\x00\\xff\\xff").decode()
        text = "hello hello hello, DevProxy"
        sizes = []
        for _ in range(2):
            data = deflate(text)
            sizes.append(len(data))
            t.sendall(frame(0xC1, data))
            print(answer())
        whole = deflate("in two frames: " + "abc" * 10)
        t.sendall(frame(0x41, whole[:5]) + frame(0x80, whole[5:]))
        print(answer())
        print(sizes[0], sizes[1])
        t.sendall(frame(0x88, b""))
        t.recv(1024)
        """
        let result = try Subprocess.run("python3", ["-c", script], timeout: 30)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.prefix(3) == ["echo:hello hello hello, DevProxy", "echo:hello hello hello, DevProxy",
                                    "echo:in two frames: " + String(repeating: "abc", count: 10)], "\(result.output)")
        let sizes = lines.dropFirst(3).first?.split(separator: " ").compactMap { Int($0) } ?? []
        #expect(sizes.count == 2 && sizes[1] < sizes[0], "the second message refers back into the first: \(sizes)")

        let flow = try #require(proxy.flows(count: 1).first)
        let messages = (flow.websocket ?? []).filter { $0.opcode == "text" }
        let sent = messages.filter { $0.direction == "client_to_server" }
        let echoed = messages.filter { $0.direction == "server_to_client" }
        #expect(sent.map(\.text) == ["hello hello hello, DevProxy", "hello hello hello, DevProxy",
                                     "in two frames: " + String(repeating: "abc", count: 10)])
        #expect(sent.map(\.length) == [27, 27, 45])
        #expect(sent.map(\.compressedLength) == sizes.map(Optional.some) + [sent.last?.compressedLength ?? -1])
        #expect(sent.allSatisfy { $0.decodeError == nil && $0.base64 == nil })
        let now = Date().timeIntervalSince1970
        #expect(messages.allSatisfy { ($0.time ?? 0) > now - 60 && ($0.time ?? 0) <= now }, "each message is dated")
        #expect(echoed.map(\.text) == lines.prefix(3).map(Optional.some))
        #expect(echoed.allSatisfy { ($0.compressedLength ?? 0) > 0 && $0.decodeError == nil })
    }

    /// A message that ends the DEFLATE stream (a final block, as a sender without context
    /// takeover may write) is followed by one in a fresh stream; a message that inflates past
    /// 16 MiB stops the direction's decoding and says so; data that is not DEFLATE says so.
    @Test func finalBlocksBombsAndGarbage() throws {
        let inflater = WebSocketMessageInflater(prefixLimit: 8)
        for text in ["first message", "second message"] {
            inflater.feed(try Self.deflate(Array(text.utf8), final: true))
            let message = try #require(inflater.finishMessage())
            #expect(message.length == text.utf8.count)
            #expect(message.prefix == Array(text.utf8.prefix(8)))
        }
        let bomb = WebSocketMessageInflater(prefixLimit: 8)
        bomb.feed(try Self.deflate([UInt8](repeating: 0, count: WebSocketInflation.maxOutput + 1), final: false))
        #expect(bomb.finishMessage() == nil)
        #expect(bomb.failure == "a message inflated past 16 MiB")
        let garbage = WebSocketMessageInflater(prefixLimit: 8)
        garbage.feed([0xFF, 0xFF, 0xFF, 0xFF])
        #expect(garbage.finishMessage() == nil)
        #expect(garbage.failure == "the permessage-deflate data did not inflate")
    }

    @Test func theExtensionIsReadFromTheServersAnswer() {
        #expect(WebSocketInflation.negotiated(HTTPHeaders([("Sec-WebSocket-Extensions", "permessage-deflate; server_no_context_takeover")])))
        #expect(WebSocketInflation.negotiated(HTTPHeaders([("sec-websocket-extensions", "x-webkit-deflate-frame, Permessage-Deflate")])))
        #expect(!WebSocketInflation.negotiated(HTTPHeaders([("Sec-WebSocket-Extensions", "x-webkit-deflate-frame")])))
        #expect(!WebSocketInflation.negotiated(HTTPHeaders([])))
    }

    /// Raw DEFLATE of `bytes` by Python's zlib (a real encoder), without the sync-flush tail.
    private static func deflate(_ bytes: [UInt8], final: Bool) throws -> [UInt8] {
        let script = """
        import base64, sys, zlib
        c = zlib.compressobj(wbits=-15)
        data = c.compress(sys.stdin.buffer.read()) + c.flush(zlib.\(final ? "Z_FINISH" : "Z_SYNC_FLUSH"))
        print(base64.b64encode(data if \(final ? "True" : "False") else data[:-4]).decode())
        """
        let result = try Subprocess.run("python3", ["-c", script], stdin: bytes, timeout: 30)
        guard result.status == 0, let data = Data(base64Encoded: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure(result.output)
        }
        return [UInt8](data)
    }
}
