import Foundation

/// A Connect unary call made with GET, for caching (connectrpc.com/docs/protocol, "Unary-Get-
/// Request"): the request message travels in the query, not a body:
///
///     GET /pkg.Service/Method?connect=v1&encoding=proto&base64=1&compression=gzip&message=CgVoZWxsbw
///
/// `message` is percent-encoded, and URL-safe base64 (padded or not) when `base64=1`; `encoding`
/// names the codec (`proto`, `json`), `compression` the message's coding. connect-go, -es, -swift
/// and -kotlin send `connect=v1` with every GET, which tells these requests from any other GET.
public struct ConnectGetQuery: Sendable, Equatable {
    /// `encoding`: `proto`, `json`, or another codec's name.
    public let codec: String
    /// `compression`, when given.
    public let compression: String?
    /// The message's bytes, still compressed if `compression` says so; nil when `message` is not
    /// valid percent-encoding or base64 (`problem` says why).
    public let message: [UInt8]?
    public let problem: String?

    /// Reads the query of `target` (an origin-form path, or anything with a `?`).
    /// - Returns: nil unless the query has `connect=v1`, `encoding` and `message`.
    public init?(target: String) {
        // Cheap refusals first, on bytes: almost every GET is not a Connect call.
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        var query = target[target.utf8.index(after: mark)...]
        if let hash = query.utf8.firstIndex(of: UInt8(ascii: "#")) { query = query[..<hash] }
        guard query.utf8.count >= 10, query.contains("connect=v1") else { return nil }
        var fields: [Substring: Substring] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if fields[parts[0]] == nil { fields[parts[0]] = parts.count == 2 ? parts[1] : "" }
        }
        guard fields["connect"] == "v1", let codec = fields["encoding"].flatMap(Self.percentDecoded),
              let raw = fields["message"] else { return nil }
        self.codec = String(decoding: codec, as: UTF8.self)
        compression = fields["compression"].flatMap(Self.percentDecoded).map { String(decoding: $0, as: UTF8.self) }
        guard let unescaped = Self.percentDecoded(raw) else {
            message = nil
            problem = "the message parameter is not valid percent-encoding"
            return
        }
        if fields["base64"] == "1" {
            message = unpaddedBase64Decoded(unescaped, urlSafe: true)
            problem = message == nil ? "the message parameter is not valid base64 (base64=1)" : nil
        } else {
            message = unescaped
            problem = nil
        }
    }

    /// `%XX` undone and `+` read as a space (the form encoding Go's `url.Values` writes); nil for a
    /// `%` not followed by two hex digits.
    static func percentDecoded(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "+"): out.append(0x20)
            case UInt8(ascii: "%"):
                guard let high = bytes.next().flatMap(PercentDecoding.hexValue),
                      let low = bytes.next().flatMap(PercentDecoding.hexValue) else { return nil }
                out.append(high << 4 | low)
            default: out.append(byte)
            }
        }
        return out
    }

}
