import Foundation
import SessionStore

/// The FLOW-FILTER of a map rule (`--map-remote |~d api\.example\.com|…`): the web UI's filter
/// language (`FilterExpression`), evaluated on a request before it is sent, as mitmproxy
/// evaluates its map rules' filters. Only what a request has by then can be asked: `~d`, `~u`,
/// `~m`, `~h`/`~hq`, `~t`/`~tq`, `~q`, `~http`, `~grpc`, `~all`, bare words, `!`, `&`, `|` and
/// parentheses. Patterns ignore case, as in the web UI.
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
    }

    private let term: Term

    /// Parses `text` with the filter language and keeps the request-side terms.
    /// - Throws: `ConfigurationError` saying what is wrong, `option` first.
    init(parsing text: String, option: String) throws {
        let expression: FilterExpression
        do {
            expression = try FilterExpression(parsing: text)
        } catch {
            throw ConfigurationError("\(option): the filter \"\(text)\" does not parse: \(error)")
        }
        term = try Self.term(expression, option: option)
    }

    /// Whether `request` (its URL as the rules before this one left it) passes the filter.
    func matches(_ request: LocalRequest) -> Bool {
        Self.evaluate(term, request)
    }

    private static func evaluate(_ term: Term, _ request: LocalRequest) -> Bool {
        switch term {
        case .constant(let value): return value
        case .not(let inner): return !evaluate(inner, request)
        case .and(let left, let right): return evaluate(left, request) && evaluate(right, request)
        case .or(let left, let right): return evaluate(left, request) || evaluate(right, request)
        case .url(let regex): return search(regex, request.url)
        case .host(let regex): return search(regex, request.host)
        case .method(let regex): return search(regex, request.method)
        case .headerLine(let regex):
            return request.headers.contains { search(regex, "\($0.name): \($0.value)") }
        case .contentType(let regex): return search(regex, request.header("Content-Type") ?? "")
        case .grpc:
            let type = (request.header("Content-Type") ?? "").lowercased()
            return type.hasPrefix("application/grpc") || type.hasPrefix("application/connect")
        }
    }

    private static func search(_ regex: NSRegularExpression, _ text: String) -> Bool {
        regex.firstMatch(in: text, range: NSRange(location: 0, length: text.utf16.count)) != nil
    }

    /// The request-side term for `expression`; a term that needs the response (or the body,
    /// which is still on its way) is refused with what can be used instead.
    private static func term(_ expression: FilterExpression, option: String) throws -> Term {
        switch expression {
        case .all, .http, .requestWithoutResponse: return .constant(true)
        case .grpc: return .grpc
        case .not(let inner): return .not(try term(inner, option: option))
        case .and(let left, let right): return .and(try term(left, option: option), try term(right, option: option))
        case .or(let left, let right): return .or(try term(left, option: option), try term(right, option: option))
        case .matches(let field, let pattern):
            let regex = try NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            switch field {
            case .url: return .url(regex)
            case .domain: return .host(regex)
            case .method: return .method(regex)
            case .header, .requestHeader: return .headerLine(regex)
            case .contentType, .requestContentType: return .contentType(regex)
            case .body, .requestBody, .responseBody, .responseHeader, .responseContentType:
                throw unavailable("~\(field.rawValue)", option: option)
            }
        case .status: throw unavailable("~c", option: option)
        case .hasResponse: throw unavailable("~s", option: option)
        case .error: throw unavailable("~e", option: option)
        case .websocket: throw unavailable("~websocket", option: option)
        case .asset: throw unavailable("~a", option: option)
        case .tcp: throw unavailable("~tcp", option: option)
        case .grpcStatus: throw unavailable("~gs", option: option)
        case .persona: throw unavailable("~persona", option: option)
        case .signer: throw unavailable("~signer", option: option)
        case .verdict, .ids: throw unavailable("~verdict", option: option)
        }
    }

    private static func unavailable(_ name: String, option: String) -> ConfigurationError {
        ConfigurationError("\(option): the filter's \(name) is not known before the request is sent (a map rule "
                           + "decides then); use ~d, ~u, ~m, ~h, ~hq, ~t, ~tq, ~q, ~http, ~grpc, ~all, !, & and |")
    }
}
