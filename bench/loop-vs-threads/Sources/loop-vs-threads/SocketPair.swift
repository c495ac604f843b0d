import Foundation

/// Two connected stream sockets: over TCP on 127.0.0.1 (Nagle off, as DevProxy's), or a Unix pair.
struct SocketPair: Sendable {
    let a: Int32
    let b: Int32

    static func unix() -> SocketPair {
        var fds: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0, "socketpair failed")
        return SocketPair(a: fds[0], b: fds[1])
    }

    static func tcp() -> SocketPair {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                precondition(bind(listener, pointer, length) == 0 && getsockname(listener, pointer, &length) == 0
                             && listen(listener, 1) == 0 && connect(client, pointer, length) == 0, "loopback connect failed")
            }
        }
        let server = accept(listener, nil, nil)
        var one: Int32 = 1
        for fd in [client, server] { setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) }
        return SocketPair(a: client, b: server)
    }
}

/// This process's CPU time and context switches (getrusage).
struct ResourceUsage {
    var user: Double
    var system: Double
    var voluntarySwitches: Int
    var involuntarySwitches: Int

    static func now() -> ResourceUsage {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return ResourceUsage(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime),
                             voluntarySwitches: usage.ru_nvcsw, involuntarySwitches: usage.ru_nivcsw)
    }

    static func - (after: ResourceUsage, before: ResourceUsage) -> ResourceUsage {
        ResourceUsage(user: after.user - before.user, system: after.system - before.system,
                      voluntarySwitches: after.voluntarySwitches - before.voluntarySwitches,
                      involuntarySwitches: after.involuntarySwitches - before.involuntarySwitches)
    }
}
