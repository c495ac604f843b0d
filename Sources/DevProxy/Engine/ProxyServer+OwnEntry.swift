import Foundation

extension ProxyServer {
    /// Where DevProxy's own requests (the web UI's replays, `--grpc-reflection`'s questions) go
    /// in: the first regular listener, so they take the path an app's request takes and are
    /// recorded as flows.
    public struct OwnEntry: Sendable, Equatable {
        /// The listener's address, a wildcard one read as its family's loopback.
        public let host: String
        public let port: Int
        /// `Proxy-Authorization` when the proxy wants credentials (`--proxy-auth`'s first).
        public let authorization: String?
    }

    /// The regular listener DevProxy's own requests use; nil when there is none.
    public var ownEntry: OwnEntry? {
        guard let regular = boundListeners.first(where: { $0.kind == .regular })?.address else { return nil }
        let host = switch regular.host {
        case "0.0.0.0": "127.0.0.1"
        case "::": "::1"
        default: regular.host
        }
        let authorization = configuration.proxyCredentials.first.map {
            "Basic " + Data("\($0.user):\($0.password)".utf8).base64EncodedString()
        }
        return OwnEntry(host: host, port: regular.port, authorization: authorization)
    }
}
