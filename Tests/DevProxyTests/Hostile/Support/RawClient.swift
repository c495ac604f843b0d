import CertAuthority
@testable import DevProxy
import Foundation

/// A client that speaks raw bytes to the proxy, to send what no well-behaved client would:
/// over plain TCP (absolute-form requests), or inside CONNECT + TLS trusting only the team root.
final class RawClient: @unchecked Sendable {
    // Used by one test thread at a time (the trickle test hands the array to one other thread).
    let stream: ByteStream

    private init(stream: ByteStream) {
        self.stream = stream
    }

    deinit { stream.close() }

    /// A TCP connection to the proxy on 127.0.0.1.
    static func plain(port: Int, timeout: TimeInterval = 10) throws -> RawClient {
        let socket = try Socket.connect(host: "127.0.0.1", port: port, timeout: timeout)
        socket.setTimeout(timeout)
        return RawClient(stream: PlainStream(socket))
    }

    /// CONNECT `host:targetPort` through the proxy, then TLS to the proxy's leaf for `host`.
    static func tunnelled(port: Int, host: String, targetPort: Int, root: String, timeout: TimeInterval = 10) throws -> RawClient {
        let socket = try Socket.connect(host: "127.0.0.1", port: port, timeout: timeout)
        socket.setTimeout(timeout)
        let plain = PlainStream(socket)
        try plain.write(Array("CONNECT \(host):\(targetPort) HTTP/1.1\r\nHost: \(host):\(targetPort)\r\n\r\n".utf8))
        let answer = try readHead(plain)
        guard answer.hasPrefix("HTTP/1.1 200") else { throw TestFailureMessage("CONNECT answered \(answer)") }
        let context = try TLSContext.client(extraCAs: try Certificate.all(from: SecureFile.read(root, what: "root")), insecure: false)
        let tls = try TLSConnection.connect(socket: socket, context: context, serverName: host)
        return RawClient(stream: tls)
    }

    /// Sends bytes; a failure (the proxy already closed) is ignored: what was read tells the story.
    func send(_ bytes: [UInt8]) {
        try? stream.write(bytes)
    }

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Everything the proxy sends until it closes the connection, or `timeout` passes.
    ///
    /// - Returns: the bytes, and whether the connection ended (EOF or reset) within the time.
    func readToEnd(timeout: TimeInterval = 10) -> (bytes: [UInt8], closed: Bool) {
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            stream.socket.setTimeout(max(0.05, min(1, deadline.timeIntervalSinceNow)))
            do {
                let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
                if count == 0 { return (result, true) }
                result += buffer[0..<count]
            } catch let error as NetworkError where error.kind == .timedOut {
                continue
            } catch {
                return (result, true)
            }
        }
        return (result, false)
    }

    /// One response on a connection that stays open: its head and a body of `Content-Length`.
    func readResponse() throws -> RawAnswer {
        let head = try Self.readHead(stream)
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while body.count < length {
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            guard count > 0 else { break }
            body += buffer[0..<count]
        }
        return RawAnswer((Array(head.utf8) + body, false))
    }

    /// Reads one response head (up to the empty line) byte by byte.
    private static func readHead(_ stream: ByteStream) throws -> String {
        var bytes: [UInt8] = []
        var byte: [UInt8] = [0]
        while !bytes.ends(with: Array("\r\n\r\n".utf8)) {
            guard try byte.withUnsafeMutableBytes({ try stream.read(into: $0) }) == 1 else { break }
            bytes.append(byte[0])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A parsed answer from the proxy: status line, and body text.
struct RawAnswer {
    let text: String
    let closed: Bool

    init(_ read: (bytes: [UInt8], closed: Bool)) {
        text = String(decoding: read.bytes, as: UTF8.self)
        closed = read.closed
    }

    /// The status code of the first response, 0 when none arrived.
    var status: Int {
        let parts = text.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1.") else { return 0 }
        return Int(parts[1]) ?? 0
    }

    /// The body of the first response (after its head).
    var body: String {
        guard let range = text.range(of: "\r\n\r\n") else { return "" }
        return String(text[range.upperBound...])
    }
}

struct TestFailureMessage: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Array where Element: Equatable {
    func ends(with suffix: [Element]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
