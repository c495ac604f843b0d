#if canImport(Glibc)
import Glibc
#endif
import HTTP1

/// Which program in `devproxy exec --transparent`'s namespace opened a connection.
///
/// `devproxy run` sees each of the namespace's connections come from `devproxy exec`'s relay on
/// its own loopback, so `SocketOwners` named `devproxy` as every flow's client: the program
/// behind it is in another network namespace, where `run` cannot find its socket. The bridge,
/// inside that namespace, can: it finds the program (its pid; there is no pid namespace, so the
/// number is the same outside) and names it in a header of the `CONNECT` it sends, and `run`
/// takes the header off and reads `/proc/PID` itself, as mitmproxy's local mode names the
/// process it captured.
extension NamespaceCapture {
    /// `DevProxy-Exec-PID: PID`, on the `CONNECT` the bridge sends for a program's connection.
    public static let clientHeader = "DevProxy-Exec-PID"

    /// The pid of the process in this namespace that holds the other end of `client`, a
    /// connection the bridge accepted; `destination` is where that process's socket is connected
    /// (for a redirected connection its original destination, else the bridge's own address).
    /// Nil when it is not found within `SocketOwners`' budget.
    static func clientPID(of client: Socket, destination: SocketAddress?) -> Int32? {
        #if os(Linux)
        guard let peer = client.peerAddress, let destination,
              let entry = SocketDiagnostics.find(local: peer, remote: destination) else { return nil }
        return SocketOwners.shared.pid(holding: entry.inode)
        #else
        return nil
        #endif
    }

    /// The process the header on `head` names, taken off `head` whatever it says (it never
    /// reaches an origin or a flow), when the connection's own peer is devproxy's relay
    /// (`relay`: a process whose executable is `devproxy`). From any other client the header is
    /// ignored: a program cannot have its flows put down to another.
    static func reportedClient(taking head: inout HTTPRequestHead,
                               relay: Flow.ClientProcess?) -> Flow.ClientProcess? {
        guard let value = head.headers[clientHeader] else { return nil }
        head.headers.remove(clientHeader)
        #if os(Linux)
        guard let relay, relay.exe.map({ $0.split(separator: "/").last == "devproxy" }) == true,
              let pid = Int32(value), pid > 0 else { return nil }
        return SocketOwners.shared.process(pid)
        #else
        return nil
        #endif
    }
}
