import Foundation

/// An OkHttp `CertificatePinner` host pattern: `host`, `*.host` or `**.host`
/// (`CertificatePinner.Pin` in `okhttp3/CertificatePinner.kt`).
public struct OkHttpPattern: Hashable, Sendable, CustomStringConvertible {
    /// How the pattern's name is compared with a host.
    public enum Wildcard: Sendable {
        /// The host equals the name.
        case none
        /// `*.`: exactly one label before the name; not the name itself.
        case singleLabel
        /// `**.` (OkHttp ≥ 4.3.0): the name itself or any number of labels before it.
        case anyDepth
    }

    public let wildcard: Wildcard
    /// The canonical (lower-case) name without its wildcard prefix.
    public let name: String

    /// Validates and canonicalises a pattern as OkHttp's `Pin(pattern, pin)` does.
    ///
    /// - Throws: `PolicyError(.invalidDomain)` with `Unexpected pattern: …` (a `*` out of place)
    ///   or `Invalid pattern: …` (not a host name, e.g. a URL — rejected since OkHttp 4.4.0).
    public init(_ pattern: String) throws {
        let wildcard: Wildcard
        let rest: Substring
        if pattern.hasPrefix("**.") {
            (wildcard, rest) = (.anyDepth, pattern.dropFirst(3))
        } else if pattern.hasPrefix("*.") {
            (wildcard, rest) = (.singleLabel, pattern.dropFirst(2))
        } else {
            (wildcard, rest) = (.none, Substring(pattern))
        }
        guard !rest.contains("*") else { throw PolicyError(.invalidDomain, "Unexpected pattern: \(pattern)") }
        // OkHttp canonicalises the whole pattern, wildcard included, and `*.::1` is no IPv6 literal.
        guard wildcard == .none || !rest.contains(":") else { throw PolicyError(.invalidDomain, "Invalid pattern: \(pattern)") }
        guard let canonical = Self.canonicalHost(String(rest)) else {
            throw PolicyError(.invalidDomain, "Invalid pattern: \(pattern)")
        }
        self.wildcard = wildcard
        self.name = canonical
    }

    /// The pattern as OkHttp prints it.
    public var description: String {
        switch wildcard {
        case .none: return name
        case .singleLabel: return "*." + name
        case .anyDepth: return "**." + name
        }
    }

    /// True when `host` (canonicalised first) is covered by this pattern (`Pin.matchesHostname`).
    ///
    /// A trailing dot is part of the name on both sides, as in OkHttp, whose canonical host keeps
    /// it: `api.example.com` does not cover `api.example.com.`, so an app that requests the
    /// absolute name is not pinned by that pattern.
    public func matches(_ host: String) -> Bool {
        guard let host = Self.canonicalHost(host) else { return false }
        switch wildcard {
        case .none:
            return host == name
        case .singleLabel:
            guard host.hasSuffix("." + name) else { return false }
            return !host.dropLast(name.count + 1).contains(".")
        case .anyDepth:
            return host == name || host.hasSuffix("." + name)
        }
    }

    /// OkHttp's canonical text of an IPv6 literal, bracketed or not (`toCanonicalHost()`): the
    /// IPv4 address of an IPv4-mapped one, else RFC 5952 §4 text (lower-case hex without leading
    /// zeros, the first longest run of two or more zero groups as `::`); nil when it does not parse.
    static func canonicalIPv6(_ text: String) -> String? {
        let bare = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        var address = in6_addr()
        guard inet_pton(AF_INET6, bare, &address) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        if bytes[..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12...].map { String($0) }.joined(separator: ".")
        }
        let groups = stride(from: 0, to: 16, by: 2).map { Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]) }
        var zeros = (start: 0, count: 0)
        var index = 0
        while index < groups.count {
            let start = index
            while index < groups.count, groups[index] == 0 { index += 1 }
            if index - start >= 2, index - start > zeros.count { zeros = (start, index - start) }
            index = max(index, start + 1)
        }
        func hex(_ slice: ArraySlice<Int>) -> String { slice.map { String($0, radix: 16) }.joined(separator: ":") }
        guard zeros.count > 0 else { return hex(groups[...]) }
        return hex(groups[..<zeros.start]) + "::" + hex(groups[(zeros.start + zeros.count)...])
    }

    /// A lower-cased ASCII host name with valid labels, or nil (`toCanonicalHost()`).
    ///
    /// One trailing dot is kept, as OkHttp keeps it (`containsInvalidLabelLengths`: "Trailing '.'
    /// is allowed"). Non-ASCII names would be IDNA-mapped to punycode by OkHttp; we do not
    /// implement IDNA and reject them instead.
    static func canonicalHost(_ host: String) -> String? {
        if host.contains(":") { return canonicalIPv6(host) }
        let host = host.lowercased()
        guard !host.isEmpty, host.utf8.count <= 253, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
        // OkHttp's containsInvalidHostnameCharacters set, minus the control and non-ASCII ranges.
        guard !host.contains(where: { " #%/:?@[\\]".contains($0) }) else { return nil }
        let labels = (host.hasSuffix(".") ? host.dropLast() : Substring(host)).split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy({ (1...63).contains($0.utf8.count) }) else { return nil }
        return host
    }
}
