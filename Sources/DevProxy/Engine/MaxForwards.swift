import HTTP1
import HTTP2
import HTTPTypes

/// `Max-Forwards` on TRACE and OPTIONS (RFC 9110 §7.6.2): a request whose value is 0 is answered
/// by DevProxy, the recipient the hops ran out at; a higher value goes on one lower. On other
/// methods, and where the value is not a number (`1*DIGIT`), the field goes on as it came.
enum MaxForwards {
    /// Whether `Max-Forwards` applies to `method`.
    static func applies(to method: String) -> Bool {
        method == "OPTIONS" || method == "TRACE"
    }

    /// The hops left that `value` says; nil when there is no value or it is not a number.
    static func hops(_ value: String?) -> Int? {
        guard let trimmed = value?.trimmingCharacters(in: [" ", "\t"]), !trimmed.isEmpty,
              trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        // Past Int's range: more hops than any path has, and it goes on as it came.
        return Int(trimmed)
    }

    /// The value forwarded in place of `value`: one less; nil when it goes on as it came.
    static func decremented(_ value: String?) -> String? {
        guard let hops = hops(value), hops > 0 else { return nil }
        return String(hops - 1)
    }

    /// The methods DevProxy's own answer names in `Allow`: those it relays. TRACE is left out,
    /// since DevProxy itself refuses it; CONNECT opens a tunnel, it is not a method on a resource.
    static let allow = "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH"

    /// Why DevProxy refuses a TRACE addressed to it (RFC 9110 §9.3.8 lets a server refuse it).
    static let traceRefusal = "DevProxy does not answer TRACE itself: the echo would hand the request's headers "
        + "(cookies, Authorization) to whatever script can send it (cross-site tracing); send it with "
        + "Max-Forwards above 0 to have it forwarded to the origin"

    /// The answer to a TRACE or OPTIONS whose `Max-Forwards` is 0.
    static let route = LocalRoute(name: "Max-Forwards: 0", bodyLimit: 64 << 10,
                                  matches: { answersHere(method: $0.method, value: $0.header("Max-Forwards")) },
                                  respond: answer)

    /// The answer itself: `200` with `Allow` for OPTIONS; `405` with `Allow` and the reason for TRACE.
    static func answer(_ request: LocalRequest) -> LocalResponse {
        guard request.method == "TRACE" else { return LocalResponse(status: 200, headers: [("Allow", allow)]) }
        return LocalResponse(status: 405, headers: [("Allow", allow), ("Content-Type", ErrorResponse.textPlain)],
                             body: ErrorResponse.body(status: 405, detail: traceRefusal))
    }

    /// Whether DevProxy answers this request itself (`Max-Forwards: 0` on TRACE or OPTIONS).
    static func answersHere(method: String, value: String?) -> Bool {
        applies(to: method) && hops(value) == 0
    }

    /// An HTTP/1.1 head on its way up, `Max-Forwards` lowered by one where it applies.
    static func forward(_ headers: inout HTTPHeaders, method: String) {
        guard applies(to: method), let lowered = decremented(headers["Max-Forwards"]) else { return }
        headers.replaceOrAdd(name: "Max-Forwards", value: lowered)
    }

    /// A neutral head on its way up, `Max-Forwards` lowered by one where it applies.
    static func forward(_ fields: inout HTTPFields, method: String) {
        guard applies(to: method), let lowered = decremented(fields["Max-Forwards"]) else { return }
        fields.replaceOrAppend(name: "Max-Forwards", value: lowered)
    }

    /// An HTTP/2 head on its way up, `max-forwards` lowered by one where it applies.
    static func forward(_ block: inout HTTP2HeaderBlock) {
        guard let method = block.method, applies(to: method),
              let index = block.fields.firstIndex(where: { $0.name == Array("max-forwards".utf8) }),
              let lowered = decremented(String(decoding: block.fields[index].value, as: UTF8.self)) else { return }
        block.fields[index].value = Array(lowered.utf8)
    }
}
