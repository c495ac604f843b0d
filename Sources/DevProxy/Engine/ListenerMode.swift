/// How a listener learns where a client's connection is going (`--mode SPEC`, repeatable):
/// each mode only decides that, then hands `(host, port, first bytes)` to the one interception
/// path, so every mode keeps what the regular one guarantees.
public struct ListenerMode: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        /// An explicit HTTP proxy: absolute-form requests and CONNECT.
        case regular
        /// SOCKS5 (RFC 1928; RFC 1929 username/password when `--proxy-auth` is set).
        case socks5
    }

    public var kind: Kind
    /// Where this listener binds; nil for the first mode, which takes `--listen`.
    public var host: String?
    public var port: Int?

    public init(kind: Kind, host: String? = nil, port: Int? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
    }

    /// Parses `regular`, `socks5`, optionally followed by `@HOST:PORT` (`socks5@127.0.0.1:1080`).
    ///
    /// - Throws: `ConfigurationError` naming the modes that exist, or the bad address.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
        let name = parts.first ?? ""
        guard let kind = Kind(rawValue: name.lowercased()) else {
            let planned = ["transparent", "reverse:", "upstream:"]
            if planned.contains(where: { name.lowercased().hasPrefix($0) }) {
                throw ConfigurationError("--mode \(text): this mode is not built yet; the modes are \(Self.choices)")
            }
            throw ConfigurationError("--mode \(text) is not a mode; the modes are \(Self.choices)")
        }
        self.kind = kind
        if parts.count == 2 {
            let address = parts[1]
            guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
                  (0...65535).contains(port) else {
                throw ConfigurationError("--mode \(text): \(address) is not HOST:PORT")
            }
            var host = String(address[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            self.host = host.isEmpty ? "127.0.0.1" : host
            self.port = port
        }
    }

    public static var choices: String { Kind.allCases.map(\.rawValue).joined(separator: ", ") }

    public var description: String {
        guard let host, let port else { return kind.rawValue }
        return "\(kind.rawValue)@\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
