/// Connection-specific fields (RFC 9110 §7.6.1) that a proxy must not forward, and the
/// persistence and expectation rules that read them.
extension HTTPHeaders {
    /// Fields that only make sense on one hop, whether or not Connection names them.
    ///
    /// RFC 9110 §7.6.1 names Proxy-Connection, Keep-Alive, TE, Transfer-Encoding and Upgrade;
    /// Proxy-Authorization and Proxy-Authenticate (§11.7) are meant for this proxy alone.
    /// (Dispatched on length first: this runs for every field of every relayed message.)
    static func isAlwaysHopByHop(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2: return name.equalsCaseInsensitive("TE")
        case 7: return name.equalsCaseInsensitive("Upgrade")
        case 10: return name.equalsCaseInsensitive("Connection") || name.equalsCaseInsensitive("Keep-Alive")
        case 16: return name.equalsCaseInsensitive("Proxy-Connection")
        case 17: return name.equalsCaseInsensitive("Transfer-Encoding")
        case 18: return name.equalsCaseInsensitive("Proxy-Authenticate")
        case 19: return name.equalsCaseInsensitive("Proxy-Authorization")
        default: return false
        }
    }

    /// Removes hop-by-hop fields before a message is forwarded.
    ///
    /// Removes Connection and every field it names, then the fields `isAlwaysHopByHop` lists.
    /// Transfer-Encoding goes too: the forwarding side re-frames the body it sends.
    /// - Parameter relayingUpgrade: when true and the message asks to upgrade (Connection lists
    ///   `upgrade` and an Upgrade field is present), Upgrade is kept and Connection is reduced to
    ///   `Connection: upgrade` so the next hop still sees the request or the 101 response.
    public mutating func removeHopByHop(relayingUpgrade: Bool = false) {
        // Most messages carry no hop-by-hop field at all: one pass tells, and nothing is built.
        guard contains(where: { Self.isAlwaysHopByHop($0.name) }) else { return }
        let connectionOptions = listElements("Connection").map(String.init)
        let keepUpgrade = relayingUpgrade && connectionOptions.contains { $0.equalsCaseInsensitive("upgrade") }
            && contains("Upgrade")
        let connectionName = first { $0.name.equalsCaseInsensitive("Connection") }?.name
        func isDoomed(_ field: Field) -> Bool {
            if keepUpgrade && field.name.equalsCaseInsensitive("Upgrade") { return false }
            return Self.isAlwaysHopByHop(field.name) || connectionOptions.contains { field.name.equalsCaseInsensitive($0) }
        }
        // Most messages carry none: leave the (shared) field array alone then.
        if contains(where: isDoomed) { removeAll(where: isDoomed) }
        if keepUpgrade, let connectionName {
            add(name: connectionName, value: "upgrade")
        }
    }

    /// Whether the connection persists after a message with `version` and `headers` (RFC 9112 §9.3).
    ///
    /// "If the close connection option is present, the connection will not persist"; otherwise
    /// HTTP/1.1 persists by default, and HTTP/1.0 only with the `keep-alive` option.
    public static func keepAlive(version: HTTPVersion, headers: HTTPHeaders) -> Bool {
        if headers.hasListElement("Connection", "close") { return false }
        if version == .http10 { return headers.hasListElement("Connection", "keep-alive") }
        return version == .http11
    }

    /// Whether the request waits for 100 Continue before sending its body (`Expect: 100-continue`,
    /// RFC 9110 §10.1.1, compared ignoring case).
    public var expectsContinue: Bool {
        hasListElement("Expect", "100-continue")
    }

    /// The transfer codings in Transfer-Encoding, lower-cased, in the order applied; `[]` when
    /// there is none. The message is chunked when the last one is `chunked` (RFC 9112 §6.1).
    public var transferCodings: [String] {
        listElements("Transfer-Encoding").map { element in
            // A coding may carry parameters (`gzip;q=1`); only its name matters for framing.
            element.prefix { $0 != ";" }.trimmingCharacters(in: " \t").lowercased()
        }
    }
}
