import HTTP1
import HTTP2
import HTTPTypes

/// `Alt-Svc` (RFC 7838) on its way to the client. An alternative service is a way around DevProxy:
/// `h3` and the other QUIC protocols run over UDP, which no proxy setting, SOCKS or TCP redirect
/// carries, so a client that takes one (Chromium and Cronet, URLSession, OkHttp with a QUIC
/// engine) sends its later requests straight to the origin and they vanish from the capture.
/// Behind a `reverse:URL` listener every alternative leads away, since the client reaches the origin
/// only through the listener. So alternatives the client could not follow through DevProxy are
/// removed from the response it gets (`--keep-alt-svc` relays them), the flow keeps the origin's
/// header as it was and says what was removed (`response.alt_svc_removed`); `clear` is relayed.
/// HTTP/2's ALTSVC frame (RFC 7838 §4) never crosses: libnghttp2 drops extension frames it was not
/// asked to receive.
enum AltSvc {
    /// The result of filtering one field value.
    struct Filtered: Equatable {
        /// What is relayed; nil when nothing is left and the field is dropped.
        var kept: String?
        /// The alternatives removed, as they were written.
        var removed: [String]
    }

    /// `value` with the alternatives a client behind DevProxy cannot follow removed: over QUIC
    /// (anything but `h2` and `http/1.1`), or every one when `reverse`. Nil when nothing changes.
    static func filter(_ value: String, reverse: Bool) -> Filtered? {
        let values = alternatives(value)
        if values.count == 1, values[0].lowercased() == "clear" { return nil }
        var kept: [Substring] = []
        var removed: [String] = []
        for alternative in values {
            if !reverse, isTCP(protocolID(alternative)) {
                kept.append(alternative)
            } else {
                removed.append(String(alternative))
            }
        }
        guard !removed.isEmpty else { return nil }
        return Filtered(kept: kept.isEmpty ? nil : kept.joined(separator: ", "), removed: removed)
    }

    /// The comma-separated alt-values of a field value, trimmed, commas inside quoted strings
    /// (an alt-authority, a parameter) left alone.
    static func alternatives(_ value: String) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var escaped = false
        var index = value.startIndex
        func take(_ end: String.Index) {
            let part = value[start..<end].trimmingCharacters(in: [" ", "\t"])
            if !part.isEmpty { parts.append(Substring(part)) }
        }
        while index < value.endIndex {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == "," && !quoted {
                take(index)
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        take(value.endIndex)
        return parts
    }

    /// An alternative's protocol-id, percent-decoded (RFC 7838 §3: `http%2F1.1`), lower-cased.
    private static func protocolID(_ alternative: Substring) -> String {
        let token = alternative.prefix { $0 != "=" && $0 != ";" }.trimmingCharacters(in: [" ", "\t"])
        return (token.removingPercentEncoding ?? token).lowercased()
    }

    private static func isTCP(_ protocolID: String) -> Bool {
        protocolID == "h2" || protocolID == "http/1.1"
    }

    /// Filters every `Alt-Svc` field of an HTTP/1.1 head in place; returns what was removed, nil
    /// when nothing was.
    static func filter(_ headers: inout HTTPHeaders, reverse: Bool) -> [String]? {
        guard headers.contains("Alt-Svc") else { return nil }
        var removed: [String] = []
        var kept: [String] = []
        for value in headers.values("Alt-Svc") {
            if let filtered = filter(value, reverse: reverse) {
                removed += filtered.removed
                if let value = filtered.kept { kept.append(value) }
            } else {
                kept.append(value)
            }
        }
        guard !removed.isEmpty else { return nil }
        headers.remove("Alt-Svc")
        for value in kept { headers.add(name: "Alt-Svc", value: value) }
        return removed
    }

    /// The same for an HTTP/2 head's fields (names lower-case, RFC 9113 §8.2.1).
    static func filter(_ fields: inout [HTTP2Field], reverse: Bool) -> [String]? {
        let name = Array("alt-svc".utf8)
        guard fields.contains(where: { $0.name.count == 7 && $0.name == name }) else { return nil }
        var removed: [String] = []
        var result: [HTTP2Field] = []
        result.reserveCapacity(fields.count)
        for field in fields {
            guard field.name.count == 7, field.name == name,
                  let filtered = filter(String(decoding: field.value, as: UTF8.self), reverse: reverse) else {
                result.append(field)
                continue
            }
            removed += filtered.removed
            if let kept = filtered.kept { result.append(HTTP2Field("alt-svc", kept)) }
        }
        guard !removed.isEmpty else { return nil }
        fields = result
        return removed
    }
}
