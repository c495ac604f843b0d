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
        var sockets: [ObjectIdentifier: Socket] = [:]
        var stopping = false
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
        for socket in state.withLock({ Array($0.sockets.values) }) { socket.abort() }
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline && state.withLock({ !$0.sockets.isEmpty }) { usleep(10_000) }
    }

    private func acceptLoop() {
        defer { acceptDone.signal() }
        while !isStopping {
            guard let socket = (try? listener.accept(timeout: 0.25)) ?? nil else { continue }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping, state.sockets.count < configuration.maxConnections else { return false }
                state.sockets[ObjectIdentifier(socket)] = socket
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
            let thread = Thread { [self] in
                WebConnection(socket: socket, configuration: configuration, handler: handler,
                              isStopping: { [self] in isStopping }).run()
                socket.close()
                _ = state.withLock { $0.sockets.removeValue(forKey: ObjectIdentifier(socket)) }
            }
            thread.name = "devproxy-web"
            thread.stackSize = 512 * 1024
            thread.start()
        }
    }
}
