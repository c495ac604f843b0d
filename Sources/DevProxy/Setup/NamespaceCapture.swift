import Foundation
import HTTPTypes
import Synchronization

/// `devproxy exec --transparent`: one command, and every process it starts, in a network
/// namespace of its own (Linux), where the kernel sends each TCP connection it opens to a bridge
/// that hands it to DevProxy as a `CONNECT`, whether or not the program reads proxy settings: a Go
/// or Node.js program, a Flutter desktop build, a test suite that clears its environment. As
/// mitmproxy's `local` mode captures one application, without the machine-wide iptables rules and
/// separate user that `--mode transparent` needs, and without root where unprivileged user
/// namespaces are allowed.
///
/// The parts, in the order a connection meets them:
/// - inside the namespace, `iptables -t nat … REDIRECT` sends every TCP connection (loopback aside,
///   unless asked) to the `Bridge`'s port; the bridge reads where it was going (`SO_ORIGINAL_DST`)
///   and opens a `CONNECT host:port` on a Unix socket, which is a file and so reachable from both
///   namespaces;
/// - DNS (port 53, UDP or TCP, whatever server a program asks) is answered by the bridge with an address
///   of 198.18.0.0/15 (RFC 2544's benchmarking range) kept for that name (`FakeDNS`), so the
///   `CONNECT` names the host, which DevProxy resolves where it runs; AAAA gets no answer, so
///   programs use IPv4;
/// - the `HostRelay`, in `devproxy exec`'s own process outside the namespace, joins each Unix
///   connection to DevProxy's listener;
/// - other UDP (QUIC) is refused, so HTTP/3 falls back to TCP, as with `--mode transparent`;
/// - anything else (ICMP: ping) leaves by a veth pair inside the namespace and is refused as it
///   comes back in (`refusalCommands`), so ping says "Packet filtered" at once.
public enum NamespaceCapture {
    /// The first address `FakeDNS` gives: 198.18.0.1.
    static let fakeBase: UInt32 = 0xC612_0001
    /// How many it gives (198.18.0.0/15 less the network and broadcast addresses and `source`).
    static let fakeCount: UInt32 = (1 << 17) - 3
    /// The namespace's own address, the source of every connection it opens: with none (a route
    /// through loopback alone), packets leave from 0.0.0.0, and the kernel cannot match a DNS
    /// reply to the query it redirected, so a resolver waiting on a connected socket never gets it.
    static let source = "198.19.255.254"
    /// The same for IPv6, in the discard-only prefix (RFC 6666).
    static let sourceV6 = "100::1"

    /// Names and the addresses `FakeDNS` gave them, both ways.
    public final class FakeDNS: Sendable {
        private struct Table {
            var addresses: [String: UInt32] = [:]
            var names: [UInt32: String] = [:]
            var next: UInt32 = 0
        }

        private let table = Mutex(Table())
        /// Told of each name given an address for the first time (`WireGuardCapture` keeps them, so
        /// that a device's connections to addresses it looked up before a restart still name their host).
        private let given: (@Sendable (String, UInt32) -> Void)?

        public init() { given = nil }

        /// Knowing `known` already (names and the addresses they were given, oldest first); `given`
        /// is told of every name given an address from now on.
        public init(known: [(name: String, address: UInt32)], given: @escaping @Sendable (String, UInt32) -> Void) {
            self.given = given
            table.withLock { table in
                for (name, address) in known {
                    guard address >= NamespaceCapture.fakeBase,
                          address < NamespaceCapture.fakeBase + NamespaceCapture.fakeCount else { continue }
                    let key = Self.key(name)
                    if let old = table.names[address] { table.addresses[old] = nil }
                    if let old = table.addresses[key] { table.names[old] = nil }
                    table.addresses[key] = address
                    table.names[address] = key
                    table.next = address - NamespaceCapture.fakeBase + 1
                }
            }
        }

        /// The address kept for `name` (lower case, no final dot), given now if it has none; the
        /// oldest is given again once all 131,070 are used.
        public func address(for name: String) -> UInt32 {
            let key = Self.key(name)
            let (address, new) = table.withLock { table -> (UInt32, Bool) in
                if let known = table.addresses[key] { return (known, false) }
                let address = NamespaceCapture.fakeBase + table.next % NamespaceCapture.fakeCount
                table.next += 1
                if let old = table.names[address] { table.addresses[old] = nil }
                table.addresses[key] = address
                table.names[address] = key
                return (address, true)
            }
            if new { given?(key, address) }
            return address
        }

        /// The name `address` was given for, or nil when it is no address of ours.
        public func name(for address: UInt32) -> String? {
            table.withLock { $0.names[address] }
        }

        /// The host a connection's original destination `host` (numeric) stands for: the name an
        /// address of 198.18.0.0/15 was given for; nil for one of those it never gave (asked before
        /// this table was made); any other address as it is.
        public func host(for host: String) -> String? {
            guard let number = NamespaceCapture.number(host), number >> 17 == NamespaceCapture.fakeBase >> 17 else {
                return host
            }
            return name(for: number)
        }

        private static func key(_ name: String) -> String {
            var key = name.lowercased()
            if key.hasSuffix(".") { key.removeLast() }
            return key
        }

        /// The answer to the DNS query `message` (RFC 1035 §4): for one question of class IN, type
        /// A gets this name's address (TTL 60 s), any other type no record (NOERROR, so a program
        /// asking AAAA then A goes on with A); a message that is no such query gets FORMERR, or
        /// nil when it is too short to answer at all.
        public func answer(_ message: [UInt8]) -> [UInt8]? {
            guard message.count >= 12, message[2] & 0x80 == 0 else { return nil }
            func reply(code: UInt8, question: ArraySlice<UInt8>, record: [UInt8]?) -> [UInt8] {
                var out = Array(message[0..<2])
                // QR, the query's opcode and RD; RA; the response code.
                out.append(0x80 | (message[2] & 0x79))
                out.append(0x80 | code)
                out += [0, question.isEmpty ? 0 : 1, 0, record == nil ? 0 : 1, 0, 0, 0, 0]
                out += question
                out += record ?? []
                return out
            }
            let opcode = (message[2] >> 3) & 0x0F
            let questions = Int(message[4]) << 8 | Int(message[5])
            guard opcode == 0, questions == 1 else { return reply(code: 1, question: [], record: nil) }
            var index = 12
            var labels: [String] = []
            while true {
                guard index < message.count else { return reply(code: 1, question: [], record: nil) }
                let length = Int(message[index])
                if length == 0 { index += 1; break }
                // A query's name is written out; a pointer (0xC0) or a label past 63 is malformed.
                guard length <= 63, index + 1 + length <= message.count else {
                    return reply(code: 1, question: [], record: nil)
                }
                labels.append(String(decoding: message[(index + 1)...(index + length)], as: UTF8.self))
                index += 1 + length
            }
            guard index + 4 <= message.count else { return reply(code: 1, question: [], record: nil) }
            let type = Int(message[index]) << 8 | Int(message[index + 1])
            let dnsClass = Int(message[index + 2]) << 8 | Int(message[index + 3])
            let question = message[12..<(index + 4)]
            guard type == 1, dnsClass == 1, !labels.isEmpty else { return reply(code: 0, question: question, record: nil) }
            let address = self.address(for: labels.joined(separator: "."))
            var record: [UInt8] = [0xC0, 0x0C, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4]
            record += [UInt8(address >> 24), UInt8(address >> 16 & 0xFF), UInt8(address >> 8 & 0xFF),
                       UInt8(address & 0xFF)]
            return reply(code: 0, question: question, record: record)
        }
    }

    /// A TCP socket listening, or a UDP one bound, on the IPv4 `address` and a free port.
    /// - Throws: `NetworkError` naming `what` when it cannot be bound.
    public static func bound(_ address: UInt32, stream: Bool, what: String) throws -> (fd: Int32, port: Int) {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_addr.s_addr = address.bigEndian
        return try bound(socketAddress, family: AF_INET, stream: stream, what: what)
    }

    /// A socket of `family` listening (TCP) or bound (UDP) at `address` (a `sockaddr_in` or
    /// `sockaddr_in6`, port 0 for a free one), and the port it got.
    static func bound<Address>(_ address: Address, family: Int32, stream: Bool,
                               what: String) throws -> (fd: Int32, port: Int) {
        let type = stream ? Int32(SOCK_STREAM.rawValue) : Int32(SOCK_DGRAM.rawValue)
        let fd = socket(family, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NetworkError(.failed, "socket(): \(String(cString: strerror(errno)))") }
        var socketAddress = address
        var length = socklen_t(MemoryLayout<Address>.size)
        let bound = withUnsafeMutablePointer(to: &socketAddress) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && (!stream || listen(fd, 1024) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw NetworkError(.failed, "cannot bind \(what): \(reason)")
        }
        // Both address forms keep the port, big-endian, in bytes 2 and 3.
        let port = withUnsafeBytes(of: &socketAddress) { Int($0[2]) << 8 | Int($0[3]) }
        return (fd, port)
    }

    /// The dotted form of an IPv4 address held in a UInt32.
    public static func dotted(_ address: UInt32) -> String {
        "\(address >> 24).\(address >> 16 & 0xFF).\(address >> 8 & 0xFF).\(address & 0xFF)"
    }

    /// The UInt32 of a dotted IPv4 address, or nil.
    static func number(_ dotted: String) -> UInt32? {
        var address = in_addr()
        guard inet_pton(AF_INET, dotted, &address) == 1 else { return nil }
        return UInt32(bigEndian: address.s_addr)
    }

    /// Copies bytes both ways between two connected descriptors until both directions end (a
    /// direction's end shuts its destination's writing side; a failure shuts both sockets, so the
    /// other direction ends too). Blocks; one more thread for the other direction. The caller
    /// closes both afterwards.
    static func join(_ a: Int32, _ b: Int32) {
        blocking(a)
        blocking(b)
        let done = DispatchSemaphore(value: 0)
        Thread {
            copy(from: b, to: a)
            done.signal()
        }.start()
        copy(from: a, to: b)
        done.wait()
    }

    /// Makes `fd` block without a timeout: the relay's sockets wait as long as their peers do.
    static func blocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0, flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
        var none = timeval()
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 32_768)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(source, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count == 0 {
                _ = shutdown(destination, Int32(SHUT_WR))
                return
            }
            guard count > 0 else { break }
            var written = 0
            while written < count {
                let sent = buffer.withUnsafeBytes {
                    send(destination, $0.baseAddress! + written, count - written, Int32(MSG_NOSIGNAL))
                }
                if sent < 0 && errno == EINTR { continue }
                guard sent > 0 else { break }
                written += sent
            }
            guard written == count else { break }
        }
        _ = shutdown(source, Int32(SHUT_RDWR))
        _ = shutdown(destination, Int32(SHUT_RDWR))
    }

    /// A Unix-socket listener at `path` (made 0600) that joins each connection to a fresh TCP
    /// connection to `proxy`: the namespace's only way out, run in `devproxy exec`'s own process.
    public final class HostRelay: @unchecked Sendable {  // `fd` is set once; `stopped` is atomic
        public let path: String
        private let fd: Int32
        private let proxy: (host: String, port: Int)
        private let stopped = Atomic<Bool>(false)

        /// - Throws: `NetworkError` when the socket cannot be made or bound.
        public init(path: String, proxyHost: String, proxyPort: Int) throws {
            self.path = path
            proxy = (proxyHost, proxyPort)
            fd = try Self.unixSocket(path: path, listen: true)
        }

        /// Accepts and joins connections on threads of their own until `stop`.
        public func start() {
            let thread = Thread { [self] in
                while !stopped.load(ordering: .relaxed) {
                    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&poller, 1, 200) > 0 else { continue }
                    let client = Glibc.accept(fd, nil, nil)
                    guard client >= 0 else { continue }
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    let target = proxy
                    Thread {
                        defer { Glibc.close(client) }
                        guard let upstream = try? Socket.connect(host: target.host, port: target.port, timeout: 10)
                        else { return }
                        NamespaceCapture.join(client, upstream.fd)
                        upstream.close()
                    }.start()
                }
            }
            thread.start()
        }

        public func stop() {
            stopped.store(true, ordering: .relaxed)
            unlink(path)
        }

        /// A Unix stream socket, bound and listening at `path`, or connected to it.
        static func unixSocket(path: String, listen: Bool) throws -> Int32 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw NetworkError(.failed, "socket(AF_UNIX): \(String(cString: strerror(errno)))") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                Glibc.close(fd)
                throw NetworkError(.failed, "the socket path \(path) is longer than a Unix socket's address holds")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            let length = socklen_t(MemoryLayout<sockaddr_un>.size)
            let result = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    listen ? bind(fd, $0, length) : connect(fd, $0, length)
                }
            }
            guard result == 0 else {
                let reason = String(cString: strerror(errno))
                Glibc.close(fd)
                throw NetworkError(.failed, "\(listen ? "cannot listen on" : "cannot connect to") \(path): \(reason)")
            }
            if listen {
                chmod(path, 0o600)
                guard Glibc.listen(fd, 256) == 0 else {
                    Glibc.close(fd)
                    throw NetworkError(.failed, "cannot listen on \(path): \(String(cString: strerror(errno)))")
                }
            }
            return fd
        }
    }

    /// What runs inside the namespace: the TCP listener the kernel redirects connections to, a
    /// second one that is an explicit proxy for programs that read proxy settings (each
    /// connection joined to the relay as it is), and the DNS responder.
    public final class Bridge: @unchecked Sendable {  // sockets set once at init
        /// Where connections are redirected (127.0.0.1), and its IPv6 twin (::1) when there is one.
        public let redirected: Listener
        public let redirectedV6: Listener?
        /// An HTTP proxy at DevProxy's own address, inside the namespace (whose ports are its own):
        /// a program that reads `HTTP_PROXY` reaches DevProxy through it, each connection joined to
        /// the relay as it is.
        public let explicit: Listener
        /// The DNS responder's UDP port on 127.0.0.1.
        public let dnsPort: Int
        private let dnsFD: Int32
        /// The DNS-over-TCP listener's port on 127.0.0.1, and what answers there.
        public let dnsStreamPort: Int
        private let dnsStreams: DNSStreamServer
        /// The same two on ::1, when the namespace has IPv6 (for a resolver whose server is an IPv6 address).
        public let dnsPortsV6: (udp: Int, tcp: Int)?
        private let dnsV6: (fd: Int32, streams: DNSStreamServer)?
        private let relayPath: String
        public let dns = FakeDNS()
        /// Told when DevProxy refuses a redirected connection's `CONNECT` (its target, and why):
        /// the program sees only a connection reset, and `devproxy exec` says what went wrong.
        private let refused: (@Sendable (_ target: String, _ reason: String) -> Void)?

        /// - Parameters:
        ///   - relayPath: the `HostRelay`'s socket.
        ///   - proxyHost: DevProxy's listening address, where `explicit` listens in the namespace
        ///     (an address that is not loopback is added to the namespace's loopback first).
        ///   - refused: told of each `CONNECT` DevProxy refuses.
        /// - Throws: `NetworkError` when a socket cannot be made.
        public init(relayPath: String, proxyHost: String, proxyPort: Int,
                    refused: (@Sendable (_ target: String, _ reason: String) -> Void)? = nil) throws {
            self.relayPath = relayPath
            self.refused = refused
            redirected = try Listener(host: "127.0.0.1", port: 0)
            redirectedV6 = try? Listener(host: "::1", port: 0)
            explicit = try Listener(host: proxyHost, port: proxyPort)
            (dnsFD, dnsPort) = try NamespaceCapture.bound(0x7F00_0001, stream: false, what: "the DNS responder")
            let stream = try NamespaceCapture.bound(0x7F00_0001, stream: true, what: "the DNS-over-TCP listener")
            dnsStreamPort = stream.port
            dnsStreams = DNSStreamServer(listening: stream.fd) { [dns] in dns.answer($0) }
            if redirectedV6 != nil,
               let udp = try? NamespaceCapture.boundLoopbackV6(stream: false, what: "the DNS responder") {
                if let tcp = try? NamespaceCapture.boundLoopbackV6(stream: true, what: "the DNS-over-TCP listener") {
                    dnsPortsV6 = (udp.port, tcp.port)
                    dnsV6 = (udp.fd, DNSStreamServer(listening: tcp.fd) { [dns] in dns.answer($0) })
                } else {
                    Glibc.close(udp.fd)
                    (dnsPortsV6, dnsV6) = (nil, nil)
                }
            } else {
                (dnsPortsV6, dnsV6) = (nil, nil)
            }
        }

        /// Serves on threads of its own for the life of the process.
        public func start() {
            for listener in [redirected, redirectedV6].compactMap({ $0 }) {
                Thread { [self] in accepting(listener, redirected: true) }.start()
            }
            Thread { [self] in accepting(explicit, redirected: false) }.start()
            Thread { [self] in answeringDNS(on: dnsFD) }.start()
            Thread { [self] in dnsStreams.serve() }.start()
            if let dnsV6 {
                Thread { [self] in answeringDNS(on: dnsV6.fd) }.start()
                Thread { dnsV6.streams.serve() }.start()
            }
        }

        private func accepting(_ listener: Listener, redirected: Bool) {
            while true {
                guard let client = try? listener.accept(timeout: 1) else { continue }
                Thread { [self] in
                    serve(client, redirected: redirected)
                }.start()
            }
        }

        /// The `CONNECT` target for a connection the kernel redirected: the name behind a fake
        /// address, else the address itself.
        func target(of client: Socket) -> String? {
            guard let destination = client.originalDestination else { return nil }
            return URIHost.authority(host: dns.host(for: destination.host) ?? destination.host, port: destination.port)
        }

        private func serve(_ client: Socket, redirected: Bool) {
            defer { client.close() }
            var preface: [UInt8] = []
            if redirected {
                // A connection to the listener itself (nothing redirected it) would loop.
                guard let authority = target(of: client), authority != client.localAddress?.description else { return }
                let pid = NamespaceCapture.clientPID(of: client, destination: client.originalDestination)
                preface = Array(("CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
                                 + (pid.map { "\(NamespaceCapture.clientHeader): \($0)\r\n" } ?? "") + "\r\n").utf8)
            } else {
                let pid = NamespaceCapture.clientPID(of: client, destination: client.localAddress)
                guard let head = Self.firstHead(of: client, naming: pid) else { return }
                preface = head
            }
            guard let upstream = try? HostRelay.unixSocket(path: relayPath, listen: false) else { return }
            defer { Glibc.close(upstream) }
            guard preface.withUnsafeBytes({ send(upstream, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) })
                    == preface.count else { return }
            if redirected {
                let answer = Self.connectAnswer(upstream)
                guard answer.accepted else {
                    if let refused, let authority = target(of: client) { refused(authority, answer.reason) }
                    return
                }
            }
            NamespaceCapture.join(client.fd, upstream)
        }

        /// What a program sent the explicit listener first, up to its head's blank line (at most
        /// 16 KiB, within 30 s), with `NamespaceCapture.clientHeader` naming `pid` after its request
        /// line; what was read as it is when that is no complete head, or at once when its first
        /// byte cannot start a method (TLS, SOCKS: no head to wait for). Nil when nothing came.
        static func firstHead(of client: Socket, naming pid: Int32?) -> [UInt8]? {
            client.setTimeout(30)
            var head: [UInt8] = []
            var byte: UInt8 = 0
            while head.count < 16_384, !(head.count >= 4 && head.suffix(4).elementsEqual([13, 10, 13, 10])) {
                guard Glibc.read(client.fd, &byte, 1) == 1 else { break }
                head.append(byte)
                if head.count == 1, !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) { return head }
            }
            guard !head.isEmpty else { return nil }
            guard let pid, head.suffix(4).elementsEqual([13, 10, 13, 10]),
                  let lineEnd = head.firstIndex(of: 10) else { return head }
            head.insert(contentsOf: Array("\(NamespaceCapture.clientHeader): \(pid)\r\n".utf8), at: lineEnd + 1)
            return head
        }

        /// Reads the proxy's answer to the `CONNECT`, byte by byte up to its blank line (so no byte
        /// of the tunnel is taken), and says whether it was 2xx; when not, why: the first line of its
        /// body, read within 2 s (DevProxy's says the status and the reason: "407 Proxy
        /// Authentication Required: proxy credentials required"), else its status, or that the
        /// connection closed.
        static func connectAnswer(_ fd: Int32) -> (accepted: Bool, reason: String) {
            var head: [UInt8] = []
            var byte: UInt8 = 0
            while head.count < 16_384 {
                guard Glibc.read(fd, &byte, 1) == 1 else {
                    return (false, head.isEmpty ? "it closed the connection without an answer" : "its answer broke off")
                }
                head.append(byte)
                if head.count >= 4, head.suffix(4).elementsEqual([13, 10, 13, 10]) { break }
            }
            let text = String(decoding: head, as: UTF8.self)
            let line = String(decoding: head.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
            let parts = line.split(separator: " ")
            guard !(parts.count >= 2 && parts[1].hasPrefix("2")) else { return (true, "") }
            let length = text.split(separator: "\r\n").lazy
                .compactMap { field -> Int? in
                    let pair = field.split(separator: ":", maxSplits: 1)
                    guard pair.count == 2, pair[0].lowercased() == "content-length" else { return nil }
                    return Int(pair[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
            var wait = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            var body = [UInt8](repeating: 0, count: min(length, 1024))
            var filled = 0
            while filled < body.count {
                let count = body.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
                guard count > 0 else { break }
                filled += count
            }
            let first = String(decoding: body.prefix(filled), as: UTF8.self).split(whereSeparator: \.isNewline).first
            // DevProxy's body starts with the status itself ("407 Proxy Authentication Required: …").
            return (false, first.map { String($0.prefix(300)) } ?? String(line.drop { $0 != " " }.dropFirst()))
        }

        private func answeringDNS(on dnsFD: Int32) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var from = sockaddr_storage()
                var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let count = buffer.withUnsafeMutableBytes { raw in
                    withUnsafeMutablePointer(to: &from) { pointer in
                        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            recvfrom(dnsFD, raw.baseAddress, raw.count, 0, $0, &length)
                        }
                    }
                }
                guard count > 0, let reply = dns.answer(Array(buffer[0..<count])) else { continue }
                _ = reply.withUnsafeBytes { raw in
                    withUnsafePointer(to: &from) { pointer in
                        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(dnsFD, raw.baseAddress, raw.count, 0, $0, length)
                        }
                    }
                }
            }
        }
    }

    /// What comes before the bridge can listen: loopback up, and DevProxy's own address on it when
    /// that is not a loopback one (`--proxy 192.168.1.5:8080`), so the explicit listener can take it.
    public static func preparationCommands(proxyHost: String) -> [[String]] {
        var commands = [["ip", "link", "set", "lo", "up"]]
        let v6 = proxyHost.contains(":")
        let loopback = v6 ? proxyHost == "::1" : proxyHost.hasPrefix("127.") || proxyHost == "localhost"
        if !loopback { commands.append(["ip", "addr", "add", proxyHost + (v6 ? "/128" : "/32"), "dev", "lo"]) }
        return commands
    }

    /// The commands that make the rest of the namespace's network: an address of its own (`source`),
    /// the redirects, and QUIC and other UDP refused; `refusalCommands` (else `loopbackRoute`) then
    /// give it a default route, so a connection to any address gets as far as the rules. DNS, UDP
    /// to `dnsPort` and TCP to `dnsStreamPort`, whatever server it was sent to (loopback's too: a
    /// resolver at 127.0.0.53). `loopback`: loopback connections too go to DevProxy (the machine's
    /// own servers, outside the namespace), except the bridge's own ports.
    ///
    /// `proxy`: DevProxy's address when it is not a loopback one (`--proxy 192.168.1.5:8080`): the
    /// bridge's explicit listener takes it on the namespace's loopback, and a connection to it (a
    /// program told to use the proxy) goes there, not through the redirect, which made it a
    /// `CONNECT` to DevProxy's own listener, refused as a loop.
    public static func networkCommands(bridgePort: Int, dnsPort: Int, dnsStreamPort: Int, excluded: [Int],
                                       loopback: Bool, proxy: (host: String, port: Int)? = nil) -> [[String]] {
        var commands: [[String]] = [
            ["ip", "addr", "add", source + "/32", "dev", "lo"],
            ["iptables", "-t", "nat", "-A", "OUTPUT", "-p", "udp", "--dport", "53", "-j", "REDIRECT", "--to-ports",
             String(dnsPort)],
            // DNS over TCP (glibc's `options use-vc`, a retry after a truncated answer, `dig +tcp`)
            // gets the same answers; before the rule below, which would make it a CONNECT to the server.
            ["iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "--dport", "53", "-j", "REDIRECT", "--to-ports",
             String(dnsStreamPort)],
        ]
        if let proxy, !proxy.host.contains(":"), !proxy.host.hasPrefix("127.") {
            commands.append(["iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", proxy.host + "/32", "--dport",
                             String(proxy.port), "-j", "RETURN"])
        }
        let ports = ([bridgePort, dnsPort, dnsStreamPort] + excluded).map(String.init)
        let keep = ["-m", "multiport", "!", "--dports", ports.joined(separator: ",")]
        commands.append(["iptables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp"] + (loopback ? keep : ["!", "-d", "127.0.0.0/8"])
                        + ["-j", "REDIRECT", "--to-ports", String(bridgePort)])
        // Not the DNS responder's replies, which leave loopback for the namespace's own address.
        commands.append(["iptables", "-A", "OUTPUT", "-p", "udp", "!", "-s", "127.0.0.0/8", "!", "-d", "127.0.0.0/8",
                         "-j", "REJECT"])
        return commands
    }

    /// The namespace's two ends of a veth pair: its default route leaves by `refusalLink.out`
    /// (through a gateway that is `refusalLink.into`'s address), and what comes back in there is
    /// refused by the FORWARD chain with ICMP "administratively prohibited", so what no rule
    /// redirected or refused before (ICMP echo: ping says "Packet filtered") fails at once,
    /// saying so, instead of being dropped (ping waited its 10 s, or forever). Nothing leaves the
    /// namespace: both ends are in it.
    static let refusalLink = (out: "devproxy0", into: "devproxy1", gateway: "198.19.255.1", mac: "02:00:c6:13:ff:01")

    /// The commands for `refusalLink`, with `refusalSwitches` written after them.
    public static func refusalCommands() -> [[String]] {
        let link = refusalLink
        return [
            ["ip", "link", "add", link.out, "type", "veth", "peer", "name", link.into],
            ["ip", "link", "set", link.into, "address", link.mac],
            ["ip", "link", "set", link.out, "up"],
            ["ip", "link", "set", link.into, "up"],
            ["ip", "neigh", "add", link.gateway, "lladdr", link.mac, "dev", link.out, "nud", "permanent"],
            ["ip", "route", "add", "default", "via", link.gateway, "dev", link.out, "onlink", "src", source],
            ["iptables", "-P", "FORWARD", "DROP"],
            ["iptables", "-A", "FORWARD", "-i", link.into, "-j", "REJECT", "--reject-with", "icmp-admin-prohibited"],
        ]
    }

    /// The namespace's switches `refusalCommands` needs (/proc/sys/net is the namespace's own):
    /// forwarding on; the namespace's own address accepted as the source of what comes in (it is
    /// what it sent); no ICMP redirect (the per-host ICMP rate limit would then swallow refusals).
    public static let refusalSwitches: [(path: String, value: String)] = [
        ("/proc/sys/net/ipv4/conf/\(refusalLink.into)/accept_local", "1"),
        ("/proc/sys/net/ipv4/conf/all/send_redirects", "0"),
        ("/proc/sys/net/ipv4/conf/\(refusalLink.into)/send_redirects", "0"),
        ("/proc/sys/net/ipv4/ip_forward", "1"),
    ]

    /// The default route when there can be no `refusalLink` (a kernel without veth): through
    /// loopback, where ICMP is dropped.
    public static let loopbackRoute = [["ip", "route", "replace", "default", "dev", "lo", "src", source]]

    /// Writes `value` to a switch of this process's network namespace.
    /// - Throws: `NetworkError` naming the switch when it cannot.
    public static func setSwitch(_ path: String, to value: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        let written = fd >= 0 && write(fd, value, value.utf8.count) == value.utf8.count
        let reason = String(cString: strerror(errno))
        if fd >= 0 { Glibc.close(fd) }
        guard written else { throw NetworkError(.failed, "cannot write \(path): \(reason)") }
    }

    /// The same for IPv6, when the namespace has it (`bridgePortV6`: the bridge could listen on
    /// ::1); a kernel without IPv6 leaves these out, and programs then have IPv4 alone. Only what
    /// this machine reaches (`reach`) is routed to the bridge; any other IPv6 address is unreachable,
    /// but for `nameservers` (the resolver's IPv6 servers), whose DNS, UDP and TCP, goes to `dnsPorts`.
    public static func networkCommandsV6(bridgePort: Int, dnsPorts: (udp: Int, tcp: Int)?, excluded: [Int],
                                         loopback: Bool, reach: IPv6Reach, nameservers: [String],
                                         proxy: (host: String, port: Int)? = nil) -> [[String]] {
        let ports = ([bridgePort] + (dnsPorts.map { [$0.udp, $0.tcp] } ?? []) + excluded).map(String.init)
        let keep = ["-m", "multiport", "!", "--dports", ports.joined(separator: ",")]
        var routes = reach.routes
        if let dnsPorts, reach != .global { routes += nameservers.filter { $0 != "::1" }.map { $0 + "/128" } }
        var commands = [["ip", "-6", "addr", "add", sourceV6 + "/128", "dev", "lo", "nodad"]]
            + routes.map { ["ip", "-6", "route", "replace", $0, "dev", "lo", "src", sourceV6] }
        if let dnsPorts {
            for (proto, port) in [("udp", dnsPorts.udp), ("tcp", dnsPorts.tcp)] {
                commands.append(["ip6tables", "-t", "nat", "-A", "OUTPUT", "-p", proto, "--dport", "53", "-j",
                                 "REDIRECT", "--to-ports", String(port)])
            }
        }
        // As in `networkCommands`: DevProxy's own IPv6 address is the bridge's explicit listener.
        if let proxy, proxy.host.contains(":"), proxy.host != "::1" {
            commands.append(["ip6tables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp", "-d", proxy.host + "/128",
                             "--dport", String(proxy.port), "-j", "RETURN"])
        }
        return commands + [
            ["ip6tables", "-t", "nat", "-A", "OUTPUT", "-p", "tcp"] + (loopback ? keep : ["!", "-d", "::1"])
                + ["-j", "REDIRECT", "--to-ports", String(bridgePort)],
            ["ip6tables", "-A", "OUTPUT", "-p", "udp", "!", "-s", "::1", "!", "-d", "::1", "-j", "REJECT"],
        ]
    }

    /// The IPv6 servers `resolv.conf` (its text) names, each once: those a resolver in the
    /// namespace may ask. One with a zone (`fe80::1%eth0`) is left out: its interface is not there.
    public static func nameserversV6(resolvConf text: String) -> [String] {
        var found: [String] = []
        for line in text.split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { continue }
            var address = in6_addr()
            let candidate = String(words[1])
            guard inet_pton(AF_INET6, candidate, &address) == 1, !found.contains(candidate) else { continue }
            found.append(candidate)
        }
        return found
    }

    /// Runs `networkCommands`; the first that fails is thrown as one line with its output.
    public static func configureNetwork(_ commands: [[String]], environment: [String: String]) throws {
        for var command in commands {
            // iptables takes a lock shared by every namespace (/run/xtables.lock): another program's
            // rule change (Docker's, another DevProxy's) made it fail at once instead of waiting.
            if ["iptables", "ip6tables"].contains(command[0]) { command.insert(contentsOf: ["-w", "10"], at: 1) }
            let finished: ChildProcess.Finished
            do {
                finished = try ChildProcess.run(command[0], Array(command.dropFirst()), environment: environment,
                                                standardError: true, outputLimit: 4096)
            } catch {
                throw NetworkError(.failed, "\(command[0]) cannot be run (install iproute2 and iptables): \(error)")
            }
            guard finished.status == 0 else {
                let said = String(decoding: finished.output, as: UTF8.self)
                    .split(separator: "\n").first.map(String.init) ?? "exit \(finished.status)"
                throw NetworkError(.failed, "`\(command.joined(separator: " "))` failed: \(said)")
            }
        }
    }
}
