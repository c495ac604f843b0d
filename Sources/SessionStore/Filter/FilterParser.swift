/// Parses filter expressions: recursive descent over `FilterLexer`'s tokens.
///
/// Precedence, loosest first: `|`, then `&` (or adjacent terms, an implicit `&`), then `!`.
/// mitmproxy joins adjacent terms only at the top level (`a | b c` is `(a | b) & c` there);
/// here they bind like `&` everywhere (`a | (b & c)`), which is what people expect.
struct FilterParser {
    /// Filters that take no argument.
    private static let bare: [String: FilterExpression] = [
        "all": .all, "q": .requestWithoutResponse, "s": .hasResponse, "e": .error, "websocket": .websocket,
        "grpc": .grpc, "a": .asset, "http": .http, "tcp": .tcp, "marked": .marked(nil), "gqlerr": .graphQLErrors,
        "replay": .replay, "replayq": .replay, "replays": .serverReplay,
    ]

    /// Limits that keep a pasted or generated filter from exhausting the stack (200 nested `(`
    /// crashed the process with SIGSEGV) or SQLite's parser: far beyond any filter a person types.
    static let maximumDepth = 32
    static let maximumTerms = 64

    private let tokens: [FilterToken]
    private var position = 0
    private var depth = 0
    private var terms = 0

    init(tokens: [FilterToken]) { self.tokens = tokens }

    private var current: FilterToken { tokens[position] }

    private mutating func advance() -> FilterToken {
        let token = tokens[position]
        if position < tokens.count - 1 { position += 1 }
        return token
    }

    /// Parses the whole token list.
    mutating func parse() throws(FilterSyntaxError) -> FilterExpression {
        let expression = try parseOr(after: nil)
        guard case .end = current.kind else {
            throw FilterSyntaxError(column: current.column, reason: "unexpected \(current.spelling)")
        }
        return expression
    }

    private mutating func parseOr(after: FilterToken?) throws(FilterSyntaxError) -> FilterExpression {
        var expression = try parseAnd(after: after)
        while case .or = current.kind {
            let operation = advance()
            expression = .or(expression, try parseAnd(after: operation))
        }
        return expression
    }

    private mutating func parseAnd(after: FilterToken?) throws(FilterSyntaxError) -> FilterExpression {
        var expression = try parseUnary(after: after)
        while true {
            switch current.kind {
            case .and:
                let operation = advance()
                expression = .and(expression, try parseUnary(after: operation))
            case .not, .open, .filter, .text:
                expression = .and(expression, try parseUnary(after: nil))
            default:
                return expression
            }
        }
    }

    private mutating func parseUnary(after: FilterToken?) throws(FilterSyntaxError) -> FilterExpression {
        if case .not = current.kind {
            let operation = advance()
            try enter(operation)
            defer { depth -= 1 }
            return .not(try parseUnary(after: operation))
        }
        return try parsePrimary(after: after)
    }

    /// One level deeper (a `(` or a `!`), refused past `maximumDepth`.
    private mutating func enter(_ token: FilterToken) throws(FilterSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw FilterSyntaxError(column: token.column, reason: "the filter nests more than \(Self.maximumDepth) levels "
                                    + "of ( and ! deep")
        }
    }

    /// - Parameter after: the operator or parenthesis before this term, for the error message.
    private mutating func parsePrimary(after: FilterToken?) throws(FilterSyntaxError) -> FilterExpression {
        let token = current
        switch token.kind {
        case .filter, .text:
            terms += 1
            guard terms <= Self.maximumTerms else {
                throw FilterSyntaxError(column: token.column, reason: "the filter has more than \(Self.maximumTerms) terms")
            }
        default:
            break
        }
        switch token.kind {
        case .open:
            _ = advance()
            try enter(token)
            defer { depth -= 1 }
            let inner = try parseOr(after: token)
            guard case .close = current.kind else {
                throw FilterSyntaxError(column: current.column,
                                        reason: "expected ')' to close the '(' at column \(token.column)")
            }
            _ = advance()
            return inner
        case .filter(let name):
            _ = advance()
            return try parseFilter(name, token)
        case .text(let word, _):
            _ = advance()
            return .matches(.url, pattern: try Self.checked(word, token))
        default:
            let context = after.map { " after \($0.spelling)" } ?? ""
            if after == nil, case .close = token.kind {
                throw FilterSyntaxError(column: token.column, reason: "unexpected ')'")
            }
            throw FilterSyntaxError(column: token.column, reason: "expected an expression\(context)")
        }
    }

    /// The kinds of rule `~mapped KIND` takes: what a flow's record names as `mapped.rule`.
    static let mappedKinds = ["map-remote", "map-local", "mock", "modify-headers", "modify-body", "block-list"]

    private mutating func parseFilter(_ name: String, _ token: FilterToken) throws(FilterSyntaxError) -> FilterExpression {
        if let expression = Self.bare[name] { return expression }
        if name == "mapped" {
            // The kind is optional: a word after `~mapped` that names no kind of rule is a term of
            // its own, as it was before `~mapped` took one (`~mapped api` is `~mapped & api`).
            guard case .text(let value, _) = current.kind, Self.mappedKinds.contains(value.lowercased()) else {
                return .mapped(kind: nil)
            }
            _ = advance()
            return .mapped(kind: value.lowercased())
        }
        if name == "graphql" {
            // The pattern is optional: `~graphql` alone is any GraphQL call; a word after it is
            // its pattern (`~graphql & WORD` searches the URL for WORD as well).
            guard case .text(let value, _) = current.kind else { return .graphQL(pattern: nil) }
            let argument = advance()
            return .graphQL(pattern: try Self.checked(value, argument))
        }
        let known = FilterField(rawValue: name) != nil
            || ["c", "gs", "persona", "signer", "verdict", "mark", "comment"].contains(name)
        guard known else {
            throw FilterSyntaxError(column: token.column, reason: "unknown filter '~\(name)'")
        }
        let what = name == "c" ? "a status code" : name == "gs" ? "a gRPC status code"
            : ["persona", "signer", "verdict"].contains(name) ? "a name"
            : name == "mark" ? "a colour (\(FlowMark.names))" : "a pattern"
        guard case .text(let value, _) = current.kind else {
            throw FilterSyntaxError(column: current.column, reason: "expected \(what) after '~\(name)'")
        }
        let argument = advance()
        switch name {
        case "c": return .status(try Self.code(value, argument, filter: name, what: what))
        case "gs": return .grpcStatus(try Self.code(value, argument, filter: name, what: what))
        case "persona": return .persona(value)
        case "signer": return .signer(value)
        case "verdict": return .verdict(value)
        case "mark":
            guard let mark = FlowMark(name: value) else {
                throw FilterSyntaxError(column: argument.column, reason: "'~mark' needs \(what), not '\(value)'")
            }
            return .marked(mark)
        case "comment": return .comment(pattern: try Self.checked(value, argument))
        default:
            // `known` above guarantees a field.
            return .matches(FilterField(rawValue: name) ?? .url, pattern: try Self.checked(value, argument))
        }
    }

    /// A status code argument (`~c`, `~gs`): ASCII digits, 0…999. grpc-status codes are 0–16
    /// (GRPCStatus), but a server may send others.
    private static func code(_ value: String, _ token: FilterToken, filter: String,
                             what: String) throws(FilterSyntaxError) -> Int {
        guard let code = Int(value), value.allSatisfy(\.isASCII), (0...999).contains(code) else {
            throw FilterSyntaxError(column: token.column, reason: "'~\(filter)' needs \(what), not '\(value)'")
        }
        return code
    }

    /// `pattern` when it compiles as a regular expression.
    private static func checked(_ pattern: String, _ token: FilterToken) throws(FilterSyntaxError) -> String {
        if let problem = TextPattern.validate(pattern) {
            throw FilterSyntaxError(column: token.column, reason: "'\(pattern)' is \(problem)")
        }
        return pattern
    }
}

extension FilterExpression {
    /// Parses a filter expression such as `~d api\.example\.com & !~c 200`.
    ///
    /// Case-insensitive throughout: `~D` is `~d`, and patterns ignore case.
    /// - Throws: `FilterSyntaxError` with the column and what was expected there.
    public init(parsing text: String) throws(FilterSyntaxError) {
        var parser = FilterParser(tokens: try FilterLexer.tokens(text))
        self = try parser.parse()
    }
}
