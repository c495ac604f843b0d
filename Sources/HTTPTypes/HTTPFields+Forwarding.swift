/// The rules for a field section that crosses from one hop to another, the same whichever
/// versions the two hops speak (RFC 9110 §7.6.1, RFC 9113 §8.2). The codecs' conversions apply
/// them; nothing else does.
extension HTTPFields {
    /// Whether `name` is a connection-specific field: meaningful on one hop only, never forwarded
    /// and malformed in HTTP/2 (RFC 9113 §8.2.2).
    ///
    /// RFC 9110 §7.6.1 names Connection, Proxy-Connection, Keep-Alive, TE, Transfer-Encoding and
    /// Upgrade; Proxy-Authorization and Proxy-Authenticate (§11.7) are meant for this proxy alone;
    /// `HTTP2-Settings` belongs to the h2c upgrade (RFC 7540 §3.2.1).
    public static func isConnectionSpecific(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { isConnectionSpecific(utf8: $0) }
    }

    /// `isConnectionSpecific` of a name's bytes (the HTTP/2 relay reads names as bytes, without
    /// making strings of them).
    public static func isConnectionSpecific(utf8 name: UnsafeBufferPointer<UInt8>) -> Bool {
        func `is`(_ literal: StaticString) -> Bool { literal.withUTF8Buffer { ASCIICase.equal(name, $0) } }
        switch name.count {
        case 2: return `is`("TE")
        case 7: return `is`("Upgrade")
        case 10: return `is`("Connection") || `is`("Keep-Alive")
        case 14: return `is`("HTTP2-Settings")
        case 16: return `is`("Proxy-Connection")
        case 17: return `is`("Transfer-Encoding")
        case 18: return `is`("Proxy-Authenticate")
        case 19: return `is`("Proxy-Authorization")
        default: return false
        }
    }

    /// Refuses a section with a value holding CR, LF or NUL: passed to HTTP/1.1 such a value
    /// would split the message (request smuggling), and HTTP/2 forbids it (RFC 9113 §8.2.1).
    ///
    /// - Throws: `HTTPFieldError` naming the first such field.
    public func checkValues() throws(HTTPFieldError) {
        for field in self where !Self.isSafeValue(field.value) {
            throw HTTPFieldError(unsafeValueOf: field.name)
        }
    }

    /// Whether `value` holds no CR, LF or NUL (`checkValues`). Bytes, not Characters: CR LF is
    /// one Character in Swift, equal to neither "\r" nor "\n".
    public static func isSafeValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    /// Removes the connection-specific fields (`isConnectionSpecific`) and every field that
    /// `Connection` names.
    ///
    /// - Parameter keepingTrailersTE: keep `TE` as `te: trailers` when it lists `trailers`, the
    ///   one value HTTP/2 allows (RFC 9113 §8.2.2); gRPC needs it, as it is how a gRPC client
    ///   detects a proxy that would lose trailers.
    public mutating func removeConnectionSpecific(keepingTrailersTE: Bool) {
        var named: [String] = []
        forEachListElement("Connection") { element in
            named.append(String(element))
            return true
        }
        guard !named.isEmpty || contains(where: { Self.isConnectionSpecific($0.name) }) else { return }
        var kept = HTTPFields()
        kept.reserveCapacity(count)
        for field in self {
            if field.hasName("TE") {
                if keepingTrailersTE && HTTPFields([field]).hasListElement("TE", "trailers") {
                    kept.append(name: "te", value: "trailers")
                }
                continue
            }
            if Self.isConnectionSpecific(field.name) || named.contains(where: field.hasName) { continue }
            kept.append(field)
        }
        self = kept
    }

    /// Joins HTTP/2's cookie crumbs into the one `cookie` field HTTP/1.1 allows, with `; `
    /// (RFC 9113 §8.2.3), after the other fields; a section without cookies is untouched.
    public mutating func joinCookieCrumbs() {
        let crumbs = values("cookie")
        guard !crumbs.isEmpty else { return }
        remove("cookie")
        append(name: "cookie", value: crumbs.joined(separator: "; "))
    }
}
