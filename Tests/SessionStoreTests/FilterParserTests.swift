@testable import SessionStore
import XCTest

/// The grammar: what parses to what, and where an invalid expression is wrong.
final class FilterParserTests: XCTestCase {
    func testValidExpressionsParseToTheirTrees() throws {
        let table: [(String, FilterExpression)] = [
            ("~d example.com", .matches(.domain, pattern: "example.com")),
            ("~D Example", .matches(.domain, pattern: "Example")),
            ("example", .matches(.url, pattern: "example")),
            ("~c 404", .status(404)),
            ("~grpc & !~gs 0", .and(.grpc, .not(.grpcStatus(0)))),
            ("~GS 14", .grpcStatus(14)),
            ("~mapped", .mapped(kind: nil)),
            ("~MAPPED & !~c 200", .and(.mapped(kind: nil), .not(.status(200)))),
            ("~mapped Mock", .mapped(kind: "mock")),
            ("~mapped map-local !~c 200", .and(.mapped(kind: "map-local"), .not(.status(200)))),
            // A word that names no kind of rule stays a term of its own.
            ("~mapped api", .and(.mapped(kind: nil), .matches(.url, pattern: "api"))),
            ("~replay", .replay), ("~replayq", .replay), ("~replays", .serverReplay),
            ("!~c 200", .not(.status(200))),
            ("~q", .requestWithoutResponse),
            ("~s & ~e", .and(.hasResponse, .error)),
            ("~m POST ~u login", .and(.matches(.method, pattern: "POST"), .matches(.url, pattern: "login"))),
            ("~h a | ~hq b & ~hs c", .or(.matches(.header, pattern: "a"),
                                         .and(.matches(.requestHeader, pattern: "b"), .matches(.responseHeader, pattern: "c")))),
            ("!(~b x | ~bq y) ~bs z", .and(.not(.or(.matches(.body, pattern: "x"), .matches(.requestBody, pattern: "y"))),
                                          .matches(.responseBody, pattern: "z"))),
            ("~t json ~tq form ~ts png", .and(.and(.matches(.contentType, pattern: "json"),
                                                   .matches(.requestContentType, pattern: "form")),
                                              .matches(.responseContentType, pattern: "png"))),
            (#"~u "a b\"c""#, .matches(.url, pattern: #"a b"c"#)),
            (#"~u 'x\d+'"#, .matches(.url, pattern: #"x\d+"#)),
            ("~u a|b", .matches(.url, pattern: "a|b")),
            ("~websocket | ~all", .or(.websocket, .all)),
            ("~a | ~tcp & ~http", .or(.asset, .and(.tcp, .http))),
            ("!!~e", .not(.not(.error))),
            ("~persona team & ~signer ana@acme.dev ~verdict enforced",
             .and(.and(.persona("team"), .signer("ana@acme.dev")), .verdict("enforced"))),
            ("((~d a))", .matches(.domain, pattern: "a")),
        ]
        for (text, expected) in table {
            XCTAssertEqual(try FilterExpression(parsing: text), expected, text)
        }
    }

    func testInvalidExpressionsSayWhereAndWhy() {
        let table: [(String, Int, String)] = [
            ("", 1, "expected an expression"),
            ("~d a &", 7, "expected an expression after '&'"),
            ("~d a & | ~c 2", 8, "expected an expression after '&'"),
            ("| ~q", 1, "expected an expression"),
            ("!", 2, "expected an expression after '!'"),
            ("(~q", 4, "expected ')' to close the '(' at column 1"),
            ("()", 2, "expected an expression after '('"),
            ("~q )", 4, "unexpected ')'"),
            ("~c abc", 4, "'~c' needs a status code, not 'abc'"),
            ("~gs NOT_FOUND", 5, "'~gs' needs a gRPC status code, not 'NOT_FOUND'"),
            ("~gs", 4, "expected a gRPC status code after '~gs'"),
            ("~c", 3, "expected a status code after '~c'"),
            ("~d", 3, "expected a pattern after '~d'"),
            ("~d (x)", 4, "expected a pattern after '~d'"),
            ("~zz a", 1, "unknown filter '~zz'"),
            ("~ a", 1, "expected a filter name after '~'"),
            ("~u \"abc", 4, "unterminated string (no closing \")"),
            ("~u a[", 4, "'a[' is not a valid regular expression"),
            ("~persona", 9, "expected a name after '~persona'"),
            // Backtracking that never ends on one long line (`NSRegularExpression` has no time limit).
            ("~u \"(a+)+b\"", 4, "'(a+)+b' is a repetition inside a repetition (such as (a+)+), which ICU can take "
             + "years to try against one long line: repeat once (a+)"),
            ("~d '(?:[a-z]*\\.)*x'", 4, "'(?:[a-z]*\\.)*x' is a repetition inside a repetition (such as (a+)+), which ICU "
             + "can take years to try against one long line: repeat once (a+)"),
            // Nesting and length past any filter typed by hand: 200 `(` crashed the process.
            (String(repeating: "(", count: 33) + "~q" + String(repeating: ")", count: 33), 33,
             "the filter nests more than 32 levels of ( and ! deep"),
            (String(repeating: "!", count: 40) + "~q", 33, "the filter nests more than 32 levels of ( and ! deep"),
            (Array(repeating: "~q", count: 65).joined(separator: " & "), 321, "the filter has more than 64 terms"),
        ]
        for (text, column, reason) in table {
            XCTAssertThrowsError(try FilterExpression(parsing: text), text) { error in
                guard let error = error as? FilterSyntaxError else { return XCTFail("\(text): \(error)") }
                XCTAssertEqual(error.column, column, "\(text): \(error)")
                XCTAssertEqual(error.reason, reason, text)
            }
        }
    }

    /// Patterns whose repetitions do not nest, or nest only boundedly, still compile; the
    /// deepest and longest filters allowed parse.
    func testBoundedPatternsAndFiltersAtTheLimitsParse() throws {
        for pattern in ["a+b*", "(ab)+", "(a+)?", "(a+){2}", "[(a+)]+", "\\(a+\\)+", "(jpg|png)$", "^/api/v[0-9]+/"] {
            XCTAssertFalse(TextPattern.hasNestedRepetition(pattern), pattern)
            XCTAssertNoThrow(try FilterExpression(parsing: "~u '\(pattern)'"), pattern)
        }
        for pattern in ["(a+)+", "(a*)*", "((a+)b)+", "(a{2,})+", "(\\w+\\s?)*$"] {
            XCTAssertTrue(TextPattern.hasNestedRepetition(pattern), pattern)
        }
        XCTAssertNoThrow(try FilterExpression(parsing: String(repeating: "(", count: 32) + "~q" + String(repeating: ")", count: 32)))
        XCTAssertNoThrow(try FilterExpression(parsing: Array(repeating: "~q", count: 64).joined(separator: " & ")))
    }

    func testTheErrorReadsWithItsColumn() {
        XCTAssertEqual(FilterSyntaxError(column: 7, reason: "expected an expression after '&'").description,
                       "expected an expression after '&' at column 7")
    }
}
