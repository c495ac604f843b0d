import Foundation

/// A name a leaf certificate is issued for: a DNS name (wildcards allowed) or an IP address.
public enum LeafName: Hashable, Sendable, CustomStringConvertible {
    case dns(String)
    case ip(String)

    /// Classifies and validates `text`; DNS names are lower-cased.
    ///
    /// - Throws: `.invalidInput` for anything that is neither a host name nor an IP literal.
    public init(_ text: String) throws {
        var trimmed = text.hasPrefix("[") && text.hasSuffix("]") ? String(text.dropFirst().dropLast()) : text
        // An absolute name (`api.acme.dev.`, as `openssl s_client` and Python send it) is the
        // same host: a leaf names it without the root's dot, as browsers match it. It got none.
        if trimmed.count > 1, trimmed.hasSuffix("."), !trimmed.hasSuffix("..") { trimmed.removeLast() }
        if IPAddress.isLiteral(trimmed) {
            self = .ip(trimmed)
            return
        }
        let lower = trimmed.lowercased()
        let labels = lower.split(separator: ".", omittingEmptySubsequences: false)
        let valid = !lower.isEmpty && lower.utf8.count <= 253 && labels.enumerated().allSatisfy { index, label in
            if index == 0 && label == "*" && labels.count > 2 { return true }
            return !label.isEmpty && label.utf8.count <= 63 &&
                label.utf8.allSatisfy { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") ||
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        guard valid else { throw CAError(.invalidInput, "\"\(text)\" is not a host name or IP address") }
        self = .dns(lower)
    }

    /// Whether `text` is an IPv4 or IPv6 literal (without brackets).
    public static func isIPLiteral(_ text: String) -> Bool { IPAddress.isLiteral(text) }

    /// The name as typed (lower-cased for DNS).
    public var text: String {
        switch self {
        case .dns(let name), .ip(let name): return name
        }
    }

    public var description: String { text }

    /// The value for OpenSSL's subjectAltName configuration syntax.
    var subjectAltName: String {
        switch self {
        case .dns(let name): return "DNS:" + name
        case .ip(let address): return "IP:" + address
        }
    }
}

/// IP literal recognition via inet_pton.
enum IPAddress {
    static func isLiteral(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
