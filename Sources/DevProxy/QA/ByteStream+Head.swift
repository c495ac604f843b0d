extension ByteStream {
    /// Reads until the end of an HTTP head (`\r\n\r\n`), at most `limit` bytes; returns the head
    /// and whatever body bytes came with it.
    func readHead(limit: Int = 64 * 1024) throws -> (head: String, rest: [UInt8]) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = [13, 10, 13, 10]
        while received.count < limit {
            let count = try buffer.withUnsafeMutableBytes { try read(into: $0) }
            if count == 0 { break }
            received += buffer[0..<count]
            if let end = received.firstRange(of: terminator) {
                return (String(decoding: received[..<end.lowerBound], as: UTF8.self), Array(received[end.upperBound...]))
            }
        }
        throw QAError(.network, received.isEmpty ? "the peer closed the connection without answering"
                                                 : "the peer's answer is not an HTTP head")
    }
}
