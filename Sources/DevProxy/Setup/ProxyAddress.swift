import Foundation
import HTTPTypes

/// The address of DevProxy's HTTP proxy listener as a terminal's tools reach it: `--proxy
/// HOST:PORT` of `devproxy env` and `devproxy exec`, written into `HTTPS_PROXY` as `http://HOST:PORT`.
public struct ProxyAddress: Sendable, Equatable, CustomStringConvertible {
    /// A name or an IP address; an IPv6 one without brackets.
    public let host: String
    public let port: Int

    /// `devproxy run`'s default listener.
    public static let runDefault = ProxyAddress(host: "127.0.0.1", port: 8080)

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, `[V6]:PORT`, or the same as an `http://` URL (`http://127.0.0.1:8080/`,
    /// as it is copied from `HTTPS_PROXY` or the banner).
    ///
    /// - Throws: `Invalid`, one sentence saying what is wrong and what is expected.
    public init(parsing text: String) throws(Invalid) {
        var rest = Substring(text)
        if let scheme = rest.range(of: "://") {
            let name = rest[..<scheme.lowerBound].lowercased()
            guard name == "http" else {
                throw Invalid("--proxy \(text): DevProxy's proxy speaks plain HTTP (CONNECT for HTTPS); write "
                              + "HOST:PORT or http://HOST:PORT, not \(name)://")
            }
            rest = rest[scheme.upperBound...]
            if rest.hasSuffix("/") { rest = rest.dropLast() }
        }
        guard !rest.contains("@") else {
            throw Invalid("--proxy \(text): credentials are not taken in the address (other users can read them in `ps`)")
        }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]"), rest[rest.index(after: close)...].hasPrefix(":") else {
                throw Invalid("--proxy \(text) is not HOST:PORT ([::1]:8080 for an IPv6 address)")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            portText = rest[rest.index(close, offsetBy: 2)...]
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw Invalid("--proxy \(text) has no port: write HOST:PORT (devproxy run listens on 127.0.0.1:8080)")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
            guard !host.contains(":") else {
                throw Invalid("--proxy \(text): write an IPv6 address in brackets, [\(host)]:\(portText)")
            }
        }
        guard let port = Int(portText), (1...65535).contains(port), portText.allSatisfy(\.isASCII) else {
            throw Invalid("--proxy \(text): the port must be a number from 1 to 65535, not \"\(portText)\"")
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_:%".contains($0)) }) else {
            throw Invalid("--proxy \(text): \"\(host)\" is not a host name or IP address")
        }
        self.init(host: String(host), port: port)
    }

    /// `HOST:PORT`, the IPv6 address in brackets.
    public var description: String { URIHost.authority(host: host, port: port) }

    /// `http://HOST:PORT`, as the proxy variables want it.
    public var url: String { "http://\(description)" }

    /// Whether something accepts a TCP connection at the address within `timeout` (only to warn
    /// that nothing does: the proxy may be started after the shell).
    public func isListening(timeout: TimeInterval = 0.5) -> Bool {
        (try? Socket.connect(host: host, port: port, timeout: timeout)) != nil
    }

    /// Why a `--proxy` value was refused.
    public struct Invalid: Error, Sendable {
        public let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
