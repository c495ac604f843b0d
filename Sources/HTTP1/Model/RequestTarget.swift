/// A request target in one of the four forms of RFC 9112 §3.2.
public enum RequestTarget: Sendable, Equatable {
    /// `origin-form`: absolute path and optional query, e.g. `/search?q=x`. Sent to origin servers.
    case origin(String)
    /// `absolute-form`: a full URI, as sent to a forward proxy. `scheme` is lowercased, `host` has
    /// no brackets (an IPv6 literal reads `::1`, one with a zone `fe80::1%25eth0`, as RFC 6874
    /// writes it), `pathAndQuery` is at least `/`.
    case absolute(scheme: String, host: String, port: Int?, pathAndQuery: String)
    /// `authority-form`: `host:port`, only with CONNECT. `host` has no brackets.
    case authority(host: String, port: Int)
    /// `asterisk-form`: `*`, only with OPTIONS.
    case asterisk

    /// Parses `target` as sent with `method`.
    ///
    /// CONNECT requires authority-form with a port (§3.2.3); `*` is only allowed with OPTIONS
    /// (§3.2.4); otherwise the target must start with `/` or be an absolute URI with an authority.
    /// A fragment, userinfo (RFC 9110 §4.2.4) or a port over 65535 is rejected.
    /// - Throws: `HTTP1ParseError` with code `.invalidTarget` and status 400.
    public init(parsing target: String, method: String) throws(HTTP1ParseError) {
        let bytes = Array(target.utf8)[...]
        if bytes.contains(UInt8(ascii: "#")) {
            throw Self.invalid("request target contains a fragment ('#')")
        }
        // Raw UTF-8 in a path or query is taken (the start line checked it is UTF-8); spaces,
        // controls and DEL are not.
        if let bad = bytes.first(where: { $0 <= ASCII.space || $0 == ASCII.del }) {
            throw Self.invalid("request target contains an invalid character (\(ASCII.hex(bad)))")
        }
        if method == "CONNECT" {
            let (host, port) = try Self.parseAuthority(bytes)
            guard let port else { throw Self.invalid("CONNECT target must be host:port") }
            self = .authority(host: host, port: port)
            return
        }
        if target == "*" {
            guard method == "OPTIONS" else { throw Self.invalid("asterisk-form target is only allowed with OPTIONS") }
            self = .asterisk
            return
        }
        if bytes.first == ASCII.slash {
            self = .origin(target)
            return
        }
        self = try Self.parseAbsolute(bytes)
    }

    /// Parses `scheme "://" authority [path-abempty] ["?" query]`.
    private static func parseAbsolute(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> RequestTarget {
        guard let colon = bytes.firstIndex(of: ASCII.colon),
              isScheme(bytes[..<colon]),
              bytes[(colon + 1)...].starts(with: "//".utf8)
        else {
            throw invalid("request target is not in origin, absolute, authority or asterisk form")
        }
        let authorityStart = colon + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == ASCII.slash || $0 == UInt8(ascii: "?") }
            ?? bytes.endIndex
        let (host, port) = try parseAuthority(bytes[authorityStart..<authorityEnd])
        var pathAndQuery = String(decoding: bytes[authorityEnd...], as: UTF8.self)
        // RFC 9112 §3.2.1: an empty path is sent as "/" in origin-form.
        if !pathAndQuery.hasPrefix("/") { pathAndQuery = "/" + pathAndQuery }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        return .absolute(scheme: scheme, host: host, port: port, pathAndQuery: pathAndQuery)
    }

    /// Parses `host [":" port]` where host is a reg-name, IPv4 address or bracketed IPv6 literal.
    ///
    /// - Returns: the host without brackets, and the port or nil when absent or empty.
    private static func parseAuthority(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> (String, Int?) {
        if bytes.contains(UInt8(ascii: "@")) {
            throw invalid("request target contains userinfo ('@')")
        }
        let host: ArraySlice<UInt8>
        let afterHost: ArraySlice<UInt8>
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else {
                throw invalid("IPv6 literal in request target has no closing ']'")
            }
            host = bytes[(bytes.startIndex + 1)..<close]
            afterHost = bytes[(close + 1)...]
            // RFC 6874 §2: `IPv6addrz = IPv6address "%25" ZoneID`, a link-local peer's interface
            // (`[fe80::1%25eth0]`, how the web UI's replay names one); the host keeps it as written.
            let zone = host.firstRange(of: "%25".utf8)
            let address = zone.map { host[..<$0.lowerBound] } ?? host
            let ipv6Chars = "0123456789abcdefABCDEF:.".utf8
            guard address.contains(ASCII.colon), address.allSatisfy({ ipv6Chars.contains($0) }) else {
                throw invalid("request target has an invalid IPv6 literal")
            }
            if let zone, !isZoneID(host[zone.upperBound...]) {
                throw invalid("request target has an invalid IPv6 zone id (RFC 6874: %25 then letters, digits, "
                              + "'-._~' or %XX)")
            }
        } else {
            let colon = bytes.firstIndex(of: ASCII.colon) ?? bytes.endIndex
            host = bytes[..<colon]
            afterHost = bytes[colon...]
            let regNameExtras = "-._~%!$&'()*+,;=".utf8
            if let bad = host.first(where: { !isAlphanumeric($0) && !regNameExtras.contains($0) }) {
                throw invalid("request target host contains an invalid character (\(ASCII.hex(bad)))")
            }
        }
        guard !host.isEmpty else { throw invalid("request target has an empty host") }
        return (String(decoding: host, as: UTF8.self), try parsePort(afterHost))
    }

    /// Parses `[":" *DIGIT]` after a host: nil when absent or empty (RFC 3986 §3.2.3).
    private static func parsePort(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> Int? {
        guard let first = bytes.first else { return nil }
        guard first == ASCII.colon else { throw invalid("request target has junk after the host") }
        let digits = bytes.dropFirst()
        guard !digits.isEmpty else { return nil }
        guard digits.count <= 5, digits.allSatisfy(ASCII.isDigit),
              let port = Int(String(decoding: digits, as: UTF8.self)), port <= 65535
        else {
            throw invalid("request target has an invalid port")
        }
        return port
    }

    /// `ZoneID = 1*( unreserved / pct-encoded )` (RFC 6874 §2).
    private static func isZoneID(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard !bytes.isEmpty else { return false }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.endIndex, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                    return false
                }
                index += 3
            } else {
                guard isAlphanumeric(byte) || "-._~".utf8.contains(byte) else { return false }
                index += 1
            }
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        ASCII.isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    /// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1).
    private static func isScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, isAlphanumeric(first), !ASCII.isDigit(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || "+-.".utf8.contains($0) }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        ASCII.isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }

    private static func invalid(_ reason: String) -> HTTP1ParseError {
        HTTP1ParseError(.invalidTarget, reason, side: .request)
    }
}
