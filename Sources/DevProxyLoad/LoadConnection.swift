import Glibc

/// One client connection: TCP connect, optional `CONNECT` through the proxy, optional TLS,
/// then non-blocking reads and writes. Each step returns what it waits for, so one thread
/// can drive many connections with `poll`.
final class LoadConnection {
    /// What the connection waits for before its next step can make progress.
    enum Wait {
        case readable
        case writable
    }

    /// Result of a read or write after setup.
    enum Transfer {
        case bytes(Int)
        case wait(Wait)
        case closed
    }

    private enum Phase {
        case tcpConnecting
        case proxyWriting(offset: Int)
        case proxyReading
        case handshaking
        case ready
    }

    /// The socket; its descriptor is what the worker polls.
    let socket: TCPSocket
    private let plan: ConnectionPlan
    /// CONNECT target, SNI and request of this connection.
    let names: ConnectionNames
    private var phase: Phase
    private var tls: TLSStream?
    private var proxyHead: [UInt8] = []

    /// Starts connecting per `plan`.
    /// - Throws: `LoadError(.connect)` when the kernel refuses at once.
    init(plan: ConnectionPlan) throws(LoadError) {
        self.plan = plan
        names = plan.namesForNextConnection()
        let (socket, connected) = try TCPSocket.connect(to: plan.dial)
        self.socket = socket
        phase = .tcpConnecting
        if connected { try afterTCP() }
    }

    /// Whether setup (TCP, CONNECT, handshake) has finished.
    var isReady: Bool {
        if case .ready = phase { return true }
        return false
    }

    /// Advances setup as far as it goes without blocking.
    /// - Returns: nil when ready, else what to wait for.
    /// - Throws: `LoadError` of kind connect, proxy or tls.
    func advanceSetup() throws(LoadError) -> Wait? {
        while true {
            switch phase {
            case .ready:
                return nil
            case .tcpConnecting:
                var pfd = pollfd(fd: socket.fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&pfd, 1, 0) > 0 else { return .writable }
                try socket.finishConnect()
                try afterTCP()
            case .proxyWriting(let offset):
                let target = names.connectTarget ?? ""
                let request = names.socks5Hello ?? Array("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n".utf8)
                let result = request[offset...].withUnsafeBytes { socket.write($0) }
                switch result {
                case .bytes(let n):
                    phase = offset + n == request.count ? .proxyReading : .proxyWriting(offset: offset + n)
                case .wouldBlock: return .writable
                case .closed: throw LoadError(kind: .proxy, reason: "proxy closed during CONNECT")
                case .failed(let code): throw LoadError(kind: .proxy, reason: "CONNECT write: \(String(cString: strerror(code)))")
                }
            case .proxyReading:
                if let wait = try readProxyResponse() { return wait }
            case .handshaking:
                guard let tls else { phase = .ready; continue }
                switch tls.handshake() {
                case .done: phase = .ready
                case .wantRead: return .readable
                case .wantWrite: return .writable
                case .closed: throw LoadError(kind: .tls, reason: "peer closed during TLS handshake")
                case .failed(let reason): throw LoadError(kind: .tls, reason: reason)
                }
            }
        }
    }

    /// Whether input already read from the socket waits inside OpenSSL (read-ahead); `poll`
    /// would not report it, so a caller about to wait for `.readable` must read instead.
    var hasBufferedInput: Bool {
        tls?.hasBufferedInput ?? false
    }

    /// The protocol the server chose in ALPN once the handshake is done; nil for none or no TLS.
    var selectedALPN: String? { tls?.selectedALPN }

    /// Reads decrypted (or plain) bytes.
    /// - Throws: `LoadError(.io)` on a reset or TLS failure.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(LoadError) -> Transfer {
        if let tls {
            switch tls.read(into: buffer) {
            case .done(let n): return .bytes(n)
            case .wantRead: return .wait(.readable)
            case .wantWrite: return .wait(.writable)
            case .closed: return .closed
            case .failed(let reason): throw LoadError(kind: .io, reason: "TLS read: \(reason)")
            }
        }
        switch socket.read(into: buffer) {
        case .bytes(let n): return .bytes(n)
        case .wouldBlock: return .wait(.readable)
        case .closed: return .closed
        case .failed(let code): throw LoadError(kind: .io, reason: "read: \(String(cString: strerror(code)))")
        }
    }

    /// Writes (part of) `buffer`.
    /// - Throws: `LoadError(.io)` on a reset or TLS failure.
    func write(_ buffer: UnsafeRawBufferPointer) throws(LoadError) -> Transfer {
        if let tls {
            switch tls.write(buffer) {
            case .done(let n): return .bytes(n)
            case .wantRead: return .wait(.readable)
            case .wantWrite: return .wait(.writable)
            case .closed: return .closed
            case .failed(let reason): throw LoadError(kind: .io, reason: "TLS write: \(reason)")
            }
        }
        switch socket.write(buffer) {
        case .bytes(let n): return .bytes(n)
        case .wouldBlock: return .wait(.writable)
        case .closed: return .closed
        case .failed(let code): throw LoadError(kind: .io, reason: "write: \(String(cString: strerror(code)))")
        }
    }

    /// Moves on from a connected TCP socket: to CONNECT, to TLS, or straight to ready.
    private func afterTCP() throws(LoadError) {
        if names.connectTarget != nil {
            phase = .proxyWriting(offset: 0)
        } else {
            try startTLS()
        }
    }

    /// Creates the TLS stream (if the URL is https) and enters the handshake.
    private func startTLS() throws(LoadError) {
        if let context = plan.tls {
            tls = try context.makeStream(fd: socket.fd, serverName: names.serverName, largeReads: plan.largeReads)
            phase = .handshaking
        } else {
            phase = .ready
        }
    }

    /// Reads the proxy's reply to CONNECT up to the blank line; only a 2xx lets TLS start.
    /// - Returns: `.readable` while the head is incomplete, nil once TLS has been started.
    private func readProxyResponse() throws(LoadError) -> Wait? {
        var chunk = [UInt8](repeating: 0, count: 1024)
        let result = chunk.withUnsafeMutableBytes { socket.read(into: $0) }
        switch result {
        case .bytes(let n):
            proxyHead.append(contentsOf: chunk[..<n])
        case .wouldBlock:
            return .readable
        case .closed:
            throw LoadError(kind: .proxy, reason: "proxy closed the connection instead of answering CONNECT")
        case .failed(let code):
            throw LoadError(kind: .proxy, reason: "CONNECT read: \(String(cString: strerror(code)))")
        }
        if names.socks5Hello != nil { return try socks5Reply() }
        guard let end = headEnd(proxyHead) else {
            guard proxyHead.count < 16 * 1024 else { throw LoadError(kind: .proxy, reason: "CONNECT reply head over 16 KiB") }
            return .readable
        }
        let statusLine = String(decoding: proxyHead.prefix { $0 != 0x0D }, as: UTF8.self)
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let code = Int(parts[1]), (200...299).contains(code) else {
            throw LoadError(kind: .proxy, reason: "CONNECT answered '\(statusLine.prefix(80))'")
        }
        // The client speaks first in TLS, so nothing may follow the proxy's reply yet.
        guard end == proxyHead.count else { throw LoadError(kind: .proxy, reason: "bytes after CONNECT reply") }
        proxyHead = []
        try startTLS()
        return nil
    }

    /// The SOCKS5 method choice (2 bytes) and CONNECT reply (RFC 1928 §6) in `proxyHead`; only
    /// "no authentication" and "succeeded" let TLS start.
    private func socks5Reply() throws(LoadError) -> Wait? {
        guard proxyHead.count >= 7 else { return .readable }
        guard proxyHead[0] == 5, proxyHead[1] == 0 else {
            throw LoadError(kind: .proxy, reason: "SOCKS5 method refused")
        }
        guard proxyHead[3] == 0 else { throw LoadError(kind: .proxy, reason: "SOCKS5 reply \(proxyHead[3])") }
        let address = switch proxyHead[5] { case 1: 4; case 4: 16; default: 1 + Int(proxyHead[6]) }
        let total = 2 + 4 + address + 2
        guard proxyHead.count >= total else { return .readable }
        guard proxyHead.count == total else { throw LoadError(kind: .proxy, reason: "bytes after the SOCKS5 reply") }
        proxyHead = []
        try startTLS()
        return nil
    }

    /// Index just past the first CRLFCRLF, if present.
    private func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 3..<bytes.count where bytes[i] == 0x0A && bytes[i - 1] == 0x0D && bytes[i - 2] == 0x0A && bytes[i - 3] == 0x0D {
            return i + 1
        }
        return nil
    }
}
