/// Connection-specific fields (RFC 9110 §7.6.1) that a proxy must not forward, and the
/// persistence and expectation rules that read them.
extension HTTPHeaders {
    /// Fields that only make sense on one hop, whether or not Connection names them.
    ///
    /// RFC 9110 §7.6.1 names Proxy-Connection, Keep-Alive, TE, Transfer-Encoding and Upgrade;
    /// Proxy-Authorization and Proxy-Authenticate (§11.7) are meant for this proxy alone.
    /// (Dispatched on length first: this runs for every field of every relayed message.)
    public static func isAlwaysHopByHop(_ name: String) -> Bool {
        name.withUTF8Bytes(isAlwaysHopByHop)
    }

    static func isAlwaysHopByHop(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        func named(_ known: StaticString) -> Bool { ASCII.equalsCaseInsensitive(name, known) }
        switch name.count {
        case 2: return named("TE")
        case 7: return named("Upgrade")
        case 10: return named("Connection") || named("Keep-Alive")
        case 16: return named("Proxy-Connection")
        case 17: return named("Transfer-Encoding")
        case 18: return named("Proxy-Authenticate")
        case 19: return named("Proxy-Authorization")
        default: return false
        }
    }

    /// Fields that frame or route the message for every recipient (Content-Length, Host), which a
    /// Connection option never removes: RFC 9110 §7.6.1 forbids a sender to name a field "intended
    /// for all recipients of the content" there. `Connection: Content-Length` otherwise took the
    /// length off a request whose body was still forwarded, and the next hop read that body as a
    /// second request (smuggling); on a response, the client lost the body's end.
    static func isEndToEndFraming(_ name: UnsafeBufferPointer<UInt8>) -> Bool {
        ASCII.equalsCaseInsensitive(name, "Content-Length") || ASCII.equalsCaseInsensitive(name, "Host")
    }

    /// Removes hop-by-hop fields before a message is forwarded.
    ///
    /// Removes Connection and every field it names (but `isEndToEndFraming`'s), then the fields
    /// `isAlwaysHopByHop` lists.
    /// Transfer-Encoding goes too: the forwarding side re-frames the body it sends.
    /// - Parameter relayingUpgrade: when true and the message asks to upgrade (Connection lists
    ///   `upgrade` and an Upgrade field is present), Upgrade is kept and Connection is reduced to
    ///   `Connection: upgrade` so the next hop still sees the request or the 101 response. The
    ///   `h2c` token is never relayed (RFC 9113 §3.1 deprecates that upgrade; HTTP2-Settings goes
    ///   with it): past it the connection would carry h2 frames, which a recording proxy would have
    ///   to relay as an opaque tunnel. The next hop answers over HTTP/1.1 instead, as any server
    ///   that ignores an upgrade does, and an Upgrade that offered only `h2c` is removed.
    public mutating func removeHopByHop(relayingUpgrade: Bool = false) {
        // Most messages carry no hop-by-hop field at all: one pass tells, and nothing is built.
        guard containsName(where: Self.isAlwaysHopByHop) else { return }
        // Connection usually names only options (`keep-alive`, `close`) or fields removed anyway;
        // the other names it lists are collected, and `upgrade` noted.
        var namedFields: [String] = []
        var asksToUpgrade = false
        var connectionName: String?
        forEachValue(named: "Connection") { name, value in
            connectionName = connectionName ?? name
            HTTPHeaders.forEachListElement(of: value) { element in
                if ASCII.equalsCaseInsensitive(element, "upgrade") { asksToUpgrade = true }
                if !Self.isAlwaysHopByHop(element) && !Self.isEndToEndFraming(element) {
                    namedFields.append(String(decoding: element, as: UTF8.self))
                }
                return true
            }
        }
        var offered: [Substring] = []
        var withoutH2C = false
        if relayingUpgrade && asksToUpgrade {
            let all = listElements("Upgrade")
            offered = all.filter { $0.prefix { $0 != "/" }.lowercased() != "h2c" }
            withoutH2C = offered.count < all.count
        }
        let keepUpgrade = !offered.isEmpty
        removeAll { field in
            if keepUpgrade && !withoutH2C && field.name.equalsCaseInsensitive("Upgrade") { return false }
            return Self.isAlwaysHopByHop(field.name) || namedFields.contains { field.name.equalsCaseInsensitive($0) }
                || field.name.equalsCaseInsensitive("HTTP2-Settings")
        }
        if keepUpgrade && withoutH2C { add(name: "Upgrade", value: offered.joined(separator: ", ")) }
        if keepUpgrade, let connectionName {
            add(name: connectionName, value: "upgrade")
        }
    }

    /// One `Content-Length` for a list of equal values (`4, 4`, or the field twice), which the
    /// parser accepts (RFC 9112 §6.3 lets a recipient take them as one) and which went on as it
    /// came: stricter next hops (Node) refuse it. RFC 9110 §8.6: a sender sends one value.
    public mutating func collapseContentLength() {
        var count = 0
        var first: String?
        var listed = false
        forEachValue(named: "Content-Length") { _, value in
            count += 1
            if value.contains(",") { listed = true }
            if first == nil { first = value }
        }
        guard count > 1 || listed, let first else { return }
        let single = String(first.prefix { $0 != "," }.filter { $0 != " " && $0 != "\t" })
        replaceOrAdd(name: "Content-Length", value: single)
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
