/// A parsed filter expression: mitmproxy's flow filter language plus DevProxy's atoms.
///
/// Parse one with `FilterExpression(parsing:)`; the store compiles it to SQL
/// (`FilterExpression+SQL.swift`), so it runs where the flows are.
public indirect enum FilterExpression: Sendable, Equatable {
    /// `~all`: every flow.
    case all
    /// `!e`
    case not(FilterExpression)
    /// `a & b`, or `a b` (adjacent terms).
    case and(FilterExpression, FilterExpression)
    /// `a | b`
    case or(FilterExpression, FilterExpression)
    /// `~d`, `~u`, `~m`, `~h…`, `~b…`, `~t…` and a bare word: a case-insensitive regular
    /// expression searched for in a field.
    case matches(FilterField, pattern: String)
    /// `~c 404`: the response status.
    case status(Int)
    /// `~q`: an HTTP request with no response (yet, or ever).
    case requestWithoutResponse
    /// `~s`: has a response.
    case hasResponse
    /// `~e`: the flow failed (it carries an error kind).
    case error
    /// `~websocket`
    case websocket
    /// `~a`: an asset, by the response's content type (CSS, JavaScript, an image, a font), as
    /// mitmproxy's `~a` means.
    case asset
    /// `~http`: an HTTP exchange (WebSockets included), not a tunnel (mitmproxy's `~http`).
    case http
    /// `~tcp`: a tunnel whose bytes were relayed, not decrypted (mitmproxy's `~tcp`).
    case tcp
    /// `~grpc`: a gRPC, gRPC-Web or Connect call (by its request's content type, or its status).
    case grpc
    /// `~gs 5`: a gRPC call's `grpc-status`.
    case grpcStatus(Int)
    /// `~graphql`: a GraphQL call (`GraphQLCall.detect`); `~graphql REGEX`: one whose operation
    /// name (any of a batch's) the case-insensitive regular expression is found in.
    case graphQL(pattern: String?)
    /// `~gqlerr`: a GraphQL call whose response reported errors (a top-level `errors` list that
    /// is not empty), whatever its HTTP status.
    case graphQLErrors
    /// `~mapped`: a flow a rule changed or answered (`--map-remote`, `--map-local`, a mock rule,
    /// `--modify-headers`, `--modify-body`: its record has `mapped`); `~mapped mock`: one kind of
    /// rule's flows (`kind` one of `FilterParser.mappedKinds`, lower case).
    case mapped(kind: String?)
    /// `~replay` and `~replayq`: a flow the web UI sent again (Replay, Edit and resend, Repeat…:
    /// its record's `replay_of`), as mitmproxy's `~replay` and `~replayq` select client replays.
    case replay
    /// `~replays`: mitmproxy's server replay (a recorded response served again); DevProxy has
    /// none, so it selects no flow.
    case serverReplay
    /// `~persona NAME`: the TLS persona, compared whole, ignoring case.
    case persona(String)
    /// `~signer EMAIL` or `~signer SERIAL`: the signing intermediate's engineer or its serial (hex),
    /// compared whole, ignoring case.
    case signer(String)
    /// `~verdict NAME`: the pinning QA verdict (`enforced`, `report-only`…), compared whole, ignoring case.
    case verdict(String)
    /// `~marked`: a flow someone marked, in any colour (mitmproxy's `~marked`); `~mark red`: in
    /// that colour (`.marked(.red)`).
    case marked(FlowMark?)
    /// `~comment REGEX`: a case-insensitive regular expression searched for in the flow's comment.
    case comment(pattern: String)
    /// The flows with these ids (not written in the language: what `~verdict` resolves to, the
    /// verdict being judged over the session's flows when a filter runs).
    case ids([String])
}

/// The field a regular-expression filter searches.
public enum FilterField: String, Sendable, CaseIterable {
    /// `~d`: the host.
    case domain = "d"
    /// `~u` (and a bare word): the full URL.
    case url = "u"
    /// `~m`: the method.
    case method = "m"
    /// `~h`: request or response header lines, `name: value`.
    case header = "h"
    /// `~hq`
    case requestHeader = "hq"
    /// `~hs`
    case responseHeader = "hs"
    /// `~b`: request or response body, as text when it is text (decoded from gzip and the like).
    case body = "b"
    /// `~bq`
    case requestBody = "bq"
    /// `~bs`
    case responseBody = "bs"
    /// `~t`: request or response `Content-Type`.
    case contentType = "t"
    /// `~tq`
    case requestContentType = "tq"
    /// `~ts`
    case responseContentType = "ts"
    /// `~src`: the client's address, `ip:port` as the flow log's `client` writes it (mitmproxy's
    /// `~src`): one device of several (`~src 10.0.0.3:`), one process's connection.
    case source = "src"
    /// `~dst`: the server's address, `host:port` (an IPv6 literal in brackets), as mitmproxy's `~dst`.
    case destination = "dst"
    /// `~proc`: the process on this machine that made the flow, its name (`curl`) or executable
    /// (`/usr/bin/curl`), as Proxyman and Charles name the client app.
    case process = "proc"
}

extension FilterExpression {
    /// This expression with every `~verdict NAME` replaced by the flows `members(NAME)` names:
    /// a verdict is judged over a session's flows (host × persona), not stored with each flow.
    public func resolvingVerdicts(_ members: (String) -> [String]) -> FilterExpression {
        switch self {
        case .verdict(let name): .ids(members(name))
        case .not(let inner): .not(inner.resolvingVerdicts(members))
        case .and(let left, let right): .and(left.resolvingVerdicts(members), right.resolvingVerdicts(members))
        case .or(let left, let right): .or(left.resolvingVerdicts(members), right.resolvingVerdicts(members))
        default: self
        }
    }

    /// Whether the expression holds a `~verdict` term.
    public var namesVerdict: Bool {
        switch self {
        case .verdict: true
        case .not(let inner): inner.namesVerdict
        case .and(let left, let right), .or(let left, let right): left.namesVerdict || right.namesVerdict
        default: false
        }
    }
}
