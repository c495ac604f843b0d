@testable import DevProxy

/// A plain TCP connection to the proxy for tests that hold connections open between requests.
final class PlainClient {
    private let stream: PlainStream

    /// Connects to the proxy on 127.0.0.1:`port`; reads and writes time out after 10 s.
    init(port: Int) throws {
        let socket = try Socket.connect(host: "127.0.0.1", port: port, timeout: 5)
        socket.setTimeout(10)
        stream = PlainStream(socket)
    }

    /// Sends `request` and reads until what arrived ends with `ending` (or the proxy closes).
    /// - Returns: the first 12 bytes received (`HTTP/1.1 200`).
    func exchange(_ request: [UInt8], until ending: String = "\r\n\r\nhe") throws -> String {
        try stream.write(request)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).hasSuffix(ending) {
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        return String(decoding: received.prefix(12), as: UTF8.self)
    }

    /// Whether the proxy has closed the connection: the next read sees EOF.
    func sawClose() throws -> Bool {
        var byte: UInt8 = 0
        return try withUnsafeMutableBytes(of: &byte) { try stream.read(into: $0) } == 0
    }

    func close() { stream.close() }
}
