@testable import DevProxy
import Foundation
import GRPCWire
import Testing
import TestSupport

/// gRPC bodies as grpcio really sends them: a grpcio client calls a grpcio server (gzip on) through
/// a TCP relay that keeps the HTTP/2 bytes; the DATA frames of each stream are fed, frame by
/// frame, to a `GRPCFlowRecorder`, which must find the very message Python's protobuf serialized.
@Suite struct GRPCRealPeerTests {
    static let available = (try? Subprocess.run("python3", ["-c", "import grpc, google.protobuf"]).status) == 0

    /// Python: serve /lab.Echo/Unary (echo) and /lab.Echo/Stream (three echoes), call each once,
    /// print `{"message": hex, "streams": {id: {"request": [hex…], "response": [hex…]}}}`.
    static let script = """
    import grpc, json, socket, sys, threading, time
    from concurrent import futures
    from google.protobuf import struct_pb2
    ident = lambda b: b
    handler = grpc.method_handlers_generic_handler("lab.Echo", {
        "Unary": grpc.unary_unary_rpc_method_handler(lambda r, c: r, request_deserializer=ident, response_serializer=ident),
        "Stream": grpc.unary_stream_rpc_method_handler(lambda r, c: iter([r, r, r]), request_deserializer=ident,
                                                       response_serializer=ident)})
    server = grpc.server(futures.ThreadPoolExecutor(2), compression=grpc.Compression.Gzip)
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    listener = socket.socket(); listener.bind(("127.0.0.1", 0)); listener.listen(1)
    captured = {"c2s": bytearray(), "s2c": bytearray()}
    def pump(src, dst, key):
        while True:
            data = src.recv(65536)
            if not data: break
            captured[key] += data; dst.sendall(data)
        try: dst.shutdown(socket.SHUT_WR)
        except OSError: pass
    def relay():
        client, _ = listener.accept(); upstream = socket.create_connection(("127.0.0.1", port))
        for args in ((client, upstream, "c2s"), (upstream, client, "s2c")):
            threading.Thread(target=pump, args=args, daemon=True).start()
    threading.Thread(target=relay, daemon=True).start()
    s = struct_pb2.Struct(); s.update({"name": "lab", "count": 3, "tags": ["a", "b"] * 40, "nested": {"ok": True}})
    message = s.SerializeToString()
    channel = grpc.insecure_channel("127.0.0.1:%d" % listener.getsockname()[1], options=[("grpc.enable_http_proxy", 0)])
    assert channel.unary_unary("/lab.Echo/Unary", request_serializer=ident, response_deserializer=ident)(
        message, compression=grpc.Compression.Gzip, timeout=10) == message
    assert list(channel.unary_stream("/lab.Echo/Stream", request_serializer=ident, response_deserializer=ident)(
        message, timeout=10)) == [message] * 3
    channel.close(); time.sleep(0.5); server.stop(0)
    def data_frames(data):
        index = 0
        while index + 9 <= len(data):
            length = int.from_bytes(data[index:index + 3], "big"); kind = data[index + 3]; flags = data[index + 4]
            stream = int.from_bytes(data[index + 5:index + 9], "big") & 0x7FFFFFFF
            payload = data[index + 9:index + 9 + length]; index += 9 + length
            if kind == 0 and payload:
                if flags & 0x8: payload = payload[1:len(payload) - payload[0]]
                yield stream, payload
    c2s = bytes(captured["c2s"]); preface = b"PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n"
    assert c2s.startswith(preface)
    streams = {}
    for direction, data in (("request", c2s[len(preface):]), ("response", bytes(captured["s2c"]))):
        for stream, payload in data_frames(data):
            streams.setdefault(str(stream), {"request": [], "response": []})[direction].append(payload.hex())
    print(json.dumps({"message": message.hex(), "streams": streams}))
    """

    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test(.enabled(if: GRPCRealPeerTests.available))
    func grpcioMessagesAreFoundAndDecoded() throws {
        let result = try Subprocess.run("python3", ["-c", Self.script], timeout: 60)
        #expect(result.status == 0, "\(result.output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let message = Self.bytes(try #require(json["message"] as? String))
        let streams = try #require(json["streams"] as? [String: [String: [String]]])
        #expect(streams.keys.sorted() == ["1", "3"])
        let expected = ProtobufRawDecoder().decode(message)
        #expect(expected.error == nil && !expected.fields.isEmpty)
        var compressedSeen = 0
        for (id, path, requestEncoding, responses) in [("1", "/lab.Echo/Unary", "gzip", 1), ("3", "/lab.Echo/Stream", "identity", 3)] {
            let frames = try #require(streams[id])
            var recorder = GRPCFlowRecorder(path: path, requestHeaders: [("grpc-encoding", requestEncoding)],
                                            decompressor: GRPCContentDecompressor())
            for frame in frames["request"] ?? [] { recorder.requestBody(Self.bytes(frame)) }
            recorder.responseHead(headers: [("grpc-encoding", "gzip")])
            for frame in frames["response"] ?? [] { recorder.responseBody(Self.bytes(frame)) }
            recorder.responseTrailers([("grpc-status", "0")])
            let info = recorder.finish()
            #expect(info.method == String(path.split(separator: "/").last!))
            #expect(info.requestMessages == 1 && info.responseMessages == responses, "stream \(id)")
            #expect(info.notes.isEmpty, "\(info.notes)")
            for record in info.messages {
                #expect(record.note == nil, "stream \(id): \(record.note ?? "")")
                #expect(record.decoded == expected, "stream \(id) \(record.direction)")
                if record.compressed { compressedSeen += 1 }
            }
        }
        // The gzip call and the gzip server must really have compressed something.
        #expect(compressedSeen >= 2)
    }
}
