import DevProxy
import Foundation
import Synchronization

/// The UI's HTTP/1.1 server: one accept thread and a thread per connection (as the proxy does,
/// see `ProxyServer`), each running a `WebConnection` that hands requests to `handler`.
final class WebServer: @unchecked Sendable {
    let listener: Listener
    let configuration: WebUIConfiguration
    private let handler: @Sendable (WebRequest) -> WebResponse
    private let state = Mutex(State())
    private let acceptDone = DispatchSemaphore(value: 0)

    private struct State {
        var sockets: [ObjectIdentifier: Entry] = [:]
        var stopping = false
    }

    /// A connection, and since when it has been waiting for (or reading) a request head rather
    /// than answering one (nil while busy).
    private struct Entry {
        let socket: Socket
        var waitingSince: Date?
    }

    init(listener: Listener, configuration: WebUIConfiguration,
         handler: @escaping @Sendable (WebRequest) -> WebResponse) {
        self.listener = listener
        self.configuration = configuration
        self.handler = handler
    }

    var isStopping: Bool { state.withLock { $0.stopping } }

    func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "devproxy-web-accept"
        thread.start()
    }

    /// Stops accepting and cuts every connection (event streams included).
    func stop() {
        let already = state.withLock { state in
            defer { state.stopping = true }
            return state.stopping
        }
        guard !already else { return }
        acceptDone.wait()
        for entry in state.withLock({ Array($0.sockets.values) }) { entry.socket.abort() }
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline && state.withLock({ !$0.sockets.isEmpty }) { usleep(10_000) }
    }

    private func acceptLoop() {
        defer { acceptDone.signal() }
        while !isStopping {
            guard let socket = (try? listener.accept(timeout: 0.25)) ?? nil else { continue }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                if state.sockets.count >= configuration.maxConnections {
                    // Full: the connection that has waited longest without a request makes room (a
                    // keep-alive one a browser reopens at once, or one that never sent anything).
                    // 64 silent connections used to lock everyone out, unauthenticated.
                    guard let (key, oldest) = state.sockets.filter({ $0.value.waitingSince != nil })
                        .min(by: { $0.value.waitingSince! < $1.value.waitingSince! }) else { return false }
                    oldest.socket.abort()
                    state.sockets[key] = nil
                }
                state.sockets[ObjectIdentifier(socket)] = Entry(socket: socket, waitingSince: Date())
                return true
            }
            guard admitted else {
                socket.setTimeout(1)
                let response = WebResponse.error(503, "the web UI is serving its maximum of "
                                                 + "\(configuration.maxConnections) connections; retry shortly")
                try? PlainStream(socket).write(WebConnection.serialize(response, headOnly: false, keepAlive: false))
                socket.close()
                continue
            }
            let key = ObjectIdentifier(socket)
            let thread = Thread { [self] in
                var connection = WebConnection(socket: socket, configuration: configuration, handler: handler,
                                               isStopping: { [self] in isStopping })
                connection.busy = { [self] busy in
                    state.withLock { $0.sockets[key]?.waitingSince = busy ? nil : Date() }
                }
                connection.run()
                socket.close()
                _ = state.withLock { $0.sockets.removeValue(forKey: ObjectIdentifier(socket)) }
            }
            thread.name = "devproxy-web"
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }
}
