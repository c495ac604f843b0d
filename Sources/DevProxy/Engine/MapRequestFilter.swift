import Foundation
import SessionStore

/// The FLOW-FILTER of a map rule (`--map-remote |~d api\.example\.com|…`): the web UI's filter
/// language (`FilterExpression`), evaluated on a request before it is sent, as mitmproxy
/// evaluates its map rules' filters. Only what a request has by then can be asked: `~d`, `~u`,
/// `~m`, `~h`/`~hq`, `~t`/`~tq`, `~src` (the client's `ip:port`), `~dst` (the URL's `host:port`),
/// `~q`, `~http`, `~grpc`, `~all`, bare words, `!`, `&`, `|` and parentheses. Patterns ignore case, as in the web UI.
///
/// `--modify-headers`, `--modify-body` and `--intercept` run on responses too (`allowingResponse`):
/// their filters may also ask the response's head (`~s`, `~c`, `~hs`, `~ts`; `~h` and `~t` then
/// search both heads), and are asked of the flow as it stands, as mitmproxy's filters are: before a response `~s`, `~c`,
/// `~hs` and `~ts` are false and `~q` true; once there is one, `~q` is false.
struct MapRequestFilter: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe once made
    private indirect enum Term {
        case constant(Bool)
        case not(Term)
        case and(Term, Term)
        case or(Term, Term)
        case url(NSRegularExpression)
        case host(NSRegularExpression)
        case method(NSRegularExpression)
        case headerLine(NSRegularExpression)
        case contentType(NSRegularExpression)
        case grpc
        case withoutResponse
        case hasResponse
        case status(Int)
        case responseHeaderLine(NSRegularExpression)
        case responseContentType(NSRegularExpression)
        case source(NSRegularExpression)
        case destination(NSRegularExpression)
        case process(NSRegularExpression)
    }

    /// A response's head as a filter asks it: the status and the header fields as they came.
    struct ResponseHead {
        var status: Int
        var headers: [(name: String, value: String)]

        func header(_ name: String) -> String? {
            headers.first { $0.name.equalsCaseInsensitive(name) }?.value
        }
    }

    private let term: Term

    /// Parses `text` with the filter language and keeps the request-side terms.
    /// - Parameter allowingResponse: accept the response's terms too (`--modify-headers`); the
    ///   other rules decide before the request is sent, and refuse them.
    /// - Throws: `ConfigurationError` saying what is wrong, `option` first.
    init(parsing text: String, option: String, allowingResponse: Bool = false) throws {
        let expression: FilterExpression
        do {
            expression = try FilterExpression(parsing: text)
        } catch {
            throw ConfigurationError("\(option): the filter \"\(text)\" does not parse: \(error)")
        }
        term = try Self.term(expression, option: option, response: allowingResponse)
    }

    /// Whether `request` (its URL as the rules before this one left it) passes the filter, before
    /// there is a response.
    func matches(_ request: LocalRequest) -> Bool {
        Self.evaluate(term, request, nil)
    }

    /// Whether the flow of `request` (as it was sent) and `response` (its head as it came)
    /// passes the filter: a filter `allowingResponse` asked once the response's head is here.
    func matches(_ request: LocalRequest, response: ResponseHead) -> Bool {
        Self.evaluate(term, request, response)
    }

    private static func evaluate(_ term: Term, _ request: LocalRequest, _ response: ResponseHead?) -> Bool {
        switch term {
        case .constant(let value): return value
        case .not(let inner): return !evaluate(inner, request, response)
        case .and(let left, let right): return evaluate(left, request, response) && evaluate(right, request, response)
        case .or(let left, let right): return evaluate(left, request, response) || evaluate(right, request, response)
        case .url(let regex): return search(regex, request.url)
        case .host(let regex): return search(regex, request.host)
        case .method(let regex): return search(regex, request.method)
        case .headerLine(let regex):
            return request.headers.contains { search(regex, "\($0.name): \($0.value)") }
        case .contentType(let regex): return search(regex, request.header("Content-Type") ?? "")
        case .source(let regex): return search(regex, request.client)
        case .destination(let regex): return search(regex, request.destination)
        case .process(let regex):
            guard let process = request.clientProcess else { return false }
            return search(regex, process.name) || search(regex, process.exe ?? "")
        case .grpc:
            let type = (request.header("Content-Type") ?? "").lowercased()
            return type.hasPrefix("application/grpc") || type.hasPrefix("application/connect")
        case .withoutResponse: return response == nil
        case .hasResponse: return response != nil
        case .status(let code): return response?.status == code
        case .responseHeaderLine(let regex):
            return response?.headers.contains { search(regex, "\($0.name): \($0.value)") } ?? false
        case .responseContentType(let regex):
            return response.map { search(regex, $0.header("Content-Type") ?? "") } ?? false
        }
    }

    private static func search(_ regex: NSRegularExpression, _ text: String) -> Bool {
        regex.firstMatch(in: text, range: NSRange(location: 0, length: text.utf16.count)) != nil
    }

    /// The term for `expression`: request-side only unless `response`; a term that needs the
    /// response (or a body, which is still on its way) is refused with what can be used instead.
    private static func term(_ expression: FilterExpression, option: String, response: Bool) throws -> Term {
        func inner(_ expression: FilterExpression) throws -> Term {
            try term(expression, option: option, response: response)
        }
        func refused(_ name: String) -> ConfigurationError {
            response ? unavailableOnHead(name, option: option) : unavailable(name, option: option)
        }
        switch expression {
        case .all, .http: return .constant(true)
        case .requestWithoutResponse: return response ? .withoutResponse : .constant(true)
        case .grpc: return .grpc
        case .not(let expression): return .not(try inner(expression))
        case .and(let left, let right): return .and(try inner(left), try inner(right))
        case .or(let left, let right): return .or(try inner(left), try inner(right))
        case .matches(let field, let pattern):
            let regex = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            switch field {
            case .url: return .url(regex)
            case .domain: return .host(regex)
            case .method: return .method(regex)
            case .header where response: return .or(.headerLine(regex), .responseHeaderLine(regex))
            case .header, .requestHeader: return .headerLine(regex)
            case .contentType where response: return .or(.contentType(regex), .responseContentType(regex))
            case .contentType, .requestContentType: return .contentType(regex)
            case .responseHeader where response: return .responseHeaderLine(regex)
            case .responseContentType where response: return .responseContentType(regex)
            case .source: return .source(regex)
            case .destination: return .destination(regex)
            case .process: return .process(regex)
            case .body, .requestBody, .responseBody, .responseHeader, .responseContentType:
                throw refused("~\(field.rawValue)")
            }
        case .status(let code) where response: return .status(code)
        case .hasResponse where response: return .hasResponse
        case .status: throw refused("~c")
        case .hasResponse: throw refused("~s")
        case .error: throw refused("~e")
        case .websocket: throw refused("~websocket")
        case .asset: throw refused("~a")
        case .tcp: throw refused("~tcp")
        case .grpcStatus: throw refused("~gs")
        case .graphQL: throw refused("~graphql")
        case .graphQLErrors: throw refused("~gqlerr")
        case .mapped: throw refused("~mapped")
        case .serverReplay: return .constant(false)
        case .replay:
            throw ConfigurationError("\(option): ~replay selects recorded flows (the web UI's list, /api/flows); "
                                     + "a rule or a breakpoint does not take it")
        case .persona: throw refused("~persona")
        case .signer: throw refused("~signer")
        case .verdict, .ids: throw refused("~verdict")
        case .marked(nil): throw refused("~marked")
        case .marked: throw refused("~mark")
        case .comment: throw refused("~comment")
        }
    }

    private static func unavailable(_ name: String, option: String) -> ConfigurationError {
        let when = option == "--intercept" ? "a breakpoint holds the request then" : "a map rule decides then"
        return ConfigurationError("\(option): the filter's \(name) is not known before the request is sent (\(when)); "
                                  + "use ~d, ~u, ~m, ~h, ~hq, ~t, ~tq, ~src, ~dst, ~proc, ~q, ~http, ~grpc, ~all, "
                                  + "!, & and |")
    }

    /// The refusal of a term a rule run on each head (`--modify-headers`) cannot ask: bodies,
    /// errors and what is known only once a flow has ended.
    private static func unavailableOnHead(_ name: String, option: String) -> ConfigurationError {
        let when = option == "--intercept" ? "a breakpoint decides" : "the rule runs"
        return ConfigurationError("\(option): the filter's \(name) is not known when \(when) (on the request's head, "
                                  + "then on the response's, before the bodies); use ~d, ~u, ~m, ~h, ~hq, ~hs, ~t, "
                                  + "~tq, ~ts, ~src, ~dst, ~proc, ~q, ~s, ~c, ~http, ~grpc, ~all, !, & and |")
    }
}
