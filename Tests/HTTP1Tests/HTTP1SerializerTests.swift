import Testing
@testable import HTTP1

@Suite struct HTTP1SerializerTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func requestHeadIsWrittenInOrderAndCase() {
        let head = HTTPRequestHead(
            method: "POST", target: "/a?b", version: .http11, headers: ["host": "x", "X-Z": "1", "X-A": "2"])
        #expect(text(HTTP1Serializer.serialize(head)) == "POST /a?b HTTP/1.1\r\nhost: x\r\nX-Z: 1\r\nX-A: 2\r\n\r\n")
    }

    @Test func responseHeadIsWritten() {
        let head = HTTPResponseHead(
            version: .http10, status: 404, reason: "Not Found", headers: ["Content-Length": "0"])
        #expect(text(HTTP1Serializer.serialize(head)) == "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        #expect(text(HTTP1Serializer.serialize(HTTPResponseHead(status: 200, reason: ""))) == "HTTP/1.1 200 \r\n\r\n")
    }

    @Test func chunksAreFramedInHex() {
        let letters = String(repeating: "a", count: 26)
        #expect(text(HTTP1Serializer.chunk(Array(letters.utf8))) == "1A\r\n" + letters + "\r\n")
        #expect(HTTP1Serializer.chunk([UInt8]()) == [], "an empty chunk would end the body")
        #expect(text(HTTP1Serializer.lastChunk()) == "0\r\n\r\n")
        #expect(text(HTTP1Serializer.lastChunk(trailers: ["Digest": "d"])) == "0\r\nDigest: d\r\n\r\n")
    }

    @Test func serializedMessagesParseBackToTheSameEvents() throws {
        let head = HTTPRequestHead(method: "PUT", target: "/f", headers: ["Host": "h", "Transfer-Encoding": "chunked"])
        let wire = HTTP1Serializer.serialize(head) + HTTP1Serializer.chunk(Array("hello ".utf8))
            + HTTP1Serializer.chunk(Array("world".utf8)) + HTTP1Serializer.lastChunk(trailers: ["T": "1"])
        var parser = HTTP1RequestParser()
        let events = try collectEvents(&parser, chunks: [wire])
        #expect(events == [.head(head), .body(Array("hello world".utf8)), .end(trailers: ["T": "1"])])
    }
}
