/// The executable definitions of a GraphQL document (GraphQL spec, "Document"): which operations
/// it holds, read with `GraphQLLexer`, not a regular expression over the text.
///
/// An operation is `query`, `mutation` or `subscription`, an optional name, variable definitions,
/// directives and a selection set; or the query shorthand, a bare selection set. Fragment
/// definitions are read past. Anything else (a type system definition, a search phrase sent as
/// `query`, an unbalanced bracket) makes the text no executable document.
enum GraphQLDocument {
    /// The operations of `text`, in order (each a type and a name, nil when anonymous); nil when
    /// the text is not an executable document with at least one operation.
    static func operations(_ text: [UInt8]) -> [(kind: GraphQLOperation.Kind, name: String?)]? {
        var lexer = GraphQLLexer(text)
        var operations: [(kind: GraphQLOperation.Kind, name: String?)] = []
        var token = lexer.next()
        while token != .end {
            switch token {
            case .punctuator(UInt8(ascii: "{")):
                guard skipGroup(&lexer, UInt8(ascii: "{")) else { return nil }
                operations.append((.query, nil))
                token = lexer.next()
            case .name(let word):
                if word == "fragment" {
                    // fragment Name on Type Directives? SelectionSet
                    guard case .name(let name) = lexer.next(), name != "on", lexer.next() == .name("on"),
                          case .name = lexer.next() else { return nil }
                    token = lexer.next()
                    guard skipDirectives(&lexer, &token), token == .punctuator(UInt8(ascii: "{")),
                          skipGroup(&lexer, UInt8(ascii: "{")) else { return nil }
                    token = lexer.next()
                    continue
                }
                guard let kind = GraphQLOperation.Kind(rawValue: word) else { return nil }
                token = lexer.next()
                var name: String?
                if case .name(let operationName) = token {
                    name = operationName
                    token = lexer.next()
                }
                if token == .punctuator(UInt8(ascii: "(")) {
                    guard skipGroup(&lexer, UInt8(ascii: "(")) else { return nil }
                    token = lexer.next()
                }
                guard skipDirectives(&lexer, &token), token == .punctuator(UInt8(ascii: "{")),
                      skipGroup(&lexer, UInt8(ascii: "{")) else { return nil }
                operations.append((kind, name))
                token = lexer.next()
            default:
                return nil
            }
        }
        return operations.isEmpty ? nil : operations
    }

    /// Reads past directives (`@name` with optional arguments) from `token` on; `token` is then
    /// the one after them. False when one is malformed.
    private static func skipDirectives(_ lexer: inout GraphQLLexer, _ token: inout GraphQLLexer.Token) -> Bool {
        while token == .punctuator(UInt8(ascii: "@")) {
            guard case .name = lexer.next() else { return false }
            token = lexer.next()
            if token == .punctuator(UInt8(ascii: "(")) {
                guard skipGroup(&lexer, UInt8(ascii: "(")) else { return false }
                token = lexer.next()
            }
        }
        return true
    }

    /// Reads past the rest of a group whose `opener` (`{`, `(` or `[`) was just read, to its matching
    /// close; false when the brackets do not match or the text ends first.
    private static func skipGroup(_ lexer: inout GraphQLLexer, _ opener: UInt8) -> Bool {
        var open: [UInt8] = [opener]
        while let innermost = open.last {
            switch lexer.next() {
            case .punctuator(let byte) where byte == UInt8(ascii: "{") || byte == UInt8(ascii: "(")
                || byte == UInt8(ascii: "["):
                open.append(byte)
            case .punctuator(let byte) where byte == UInt8(ascii: "}") || byte == UInt8(ascii: ")")
                || byte == UInt8(ascii: "]"):
                guard closer(of: innermost) == byte else { return false }
                open.removeLast()
            case .end, .invalid:
                return false
            default:
                break
            }
        }
        return true
    }

    private static func closer(of opener: UInt8) -> UInt8 {
        switch opener {
        case UInt8(ascii: "{"): UInt8(ascii: "}")
        case UInt8(ascii: "("): UInt8(ascii: ")")
        default: UInt8(ascii: "]")
        }
    }
}
