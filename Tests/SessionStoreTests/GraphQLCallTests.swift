@testable import SessionStore
import Testing

/// Which requests are GraphQL calls, and which operation each names (`GraphQLCall.detect`,
/// `GraphQLDocument`, `GraphQLLexer`), and how many errors a response reports.
@Suite struct GraphQLCallTests {
    /// The call a POST of `json` (as `application/json`) is.
    private func post(_ json: String, contentType: String = "application/json",
                      url: String = "https://api.test/graphql", response: String? = nil,
                      responseType: String = "application/json") -> GraphQLCall? {
        GraphQLCall.detect(method: "POST", url: url, requestContentType: contentType,
                           requestBody: StoredBody(bytes: Array(json.utf8)), responseContentType: responseType,
                           responseBody: response.map { StoredBody(bytes: Array($0.utf8)) })
    }

    private func operation(_ kind: GraphQLOperation.Kind?, _ name: String?,
                           persisted: Bool = false) -> [GraphQLOperation] {
        [GraphQLOperation(kind: kind, name: name, persisted: persisted)]
    }

    @Test func theOperationIsNamedByOperationNameElseByTheDocument() {
        #expect(post(#"{"query":"query GetUser($id: ID!) { user(id: $id) { name } }","variables":{"id":"7"}}"#)?
            .operations == operation(.query, "GetUser"))
        #expect(post(#"{"query":"mutation Like { like(id: 1) { ok } }","operationName":"Like"}"#)?
            .operations == operation(.mutation, "Like"))
        #expect(post(#"{"query":"subscription OnTick { tick }"}"#)?.operations == operation(.subscription, "OnTick"))
        // Two operations in one document: the one operationName names runs, with its own type.
        #expect(post(#"{"query":"query A { a } mutation B { b }","operationName":"B"}"#)?.operations
            == operation(.mutation, "B"))
        #expect(post(#"{"query":"query A { a } mutation B { b }"}"#)?.operations == operation(.query, "A"))
        // A null or empty operationName is none.
        #expect(post(#"{"query":"query A { a }","operationName":null}"#)?.operations == operation(.query, "A"))
        #expect(post(#"{"query":"query A { a }","operationName":""}"#)?.operations == operation(.query, "A"))
    }

    @Test func anonymousAndShorthandOperationsHaveNoName() {
        #expect(post(#"{"query":"{ viewer { login } }"}"#)?.operations == operation(.query, nil))
        #expect(post(#"{"query":"mutation { logout }"}"#)?.operations == operation(.mutation, nil))
        #expect(post(#"{"query":"query ($n: Int = 3) @cached(ttl: 60) { feed(first: $n) { id } }"}"#)?.operations
            == operation(.query, nil))
    }

    @Test func commentsStringsAndFragmentsAreReadPastNotTakenForOperations() {
        let commented = ##"{"query":"# mutation Evil { drop }\nquery Safe "##
            + ##"{ search(text: \"mutation Evil { x }\") { id } }"}"##
        #expect(post(commented)?.operations == operation(.query, "Safe"))
        let block = #"{"query":"query Doc { note(text: \"\"\"a \\\"\"\" mutation B { b }\"\"\") }"}"#
        #expect(post(block)?.operations == operation(.query, "Doc"))
        let fragments = #"{"query":"fragment U on User @include(if: true) { id name } "#
            + #"fragment P on Post { title } mutation Save($p: PostInput!) { save(p: $p) { ...P author { ...U } } }"}"#
        #expect(post(fragments)?.operations == operation(.mutation, "Save"))
        // Commas are white space; a name may be a keyword of another kind.
        #expect(post(#"{"query":"query query, { mutation }"}"#)?.operations == operation(.query, "query"))
    }

    @Test func aBatchNamesEachOperation() {
        let call = post(#"[{"query":"query GetUser { me { id } }"},{"query":"query GetFeed { feed { id } }"}]"#,
                        response: #"[{"data":{"me":null},"errors":[{"message":"no"}]},{"data":{"feed":[]}}]"#)
        #expect(call?.operations == [GraphQLOperation(kind: .query, name: "GetUser"),
                                     GraphQLOperation(kind: .query, name: "GetFeed")])
        #expect(call?.errors == 1)
        // Every entry must be a GraphQL request.
        #expect(post(#"[{"query":"query A { a }"},{"name":"shoes"}]"#) == nil)
        #expect(post("[]") == nil)
    }

    @Test func persistedQueriesAreRecognisedWithOrWithoutTheirDocument() {
        let hashOnly = #"{"operationName":"GetUser","variables":{},"extensions":{"persistedQuery":"#
            + #"{"version":1,"sha256Hash":"ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38"}}}"#
        #expect(post(hashOnly)?.operations == operation(nil, "GetUser", persisted: true))
        let withDocument = #"{"query":"query GetUser { me { id } }","extensions":{"persistedQuery":"#
            + #"{"version":1,"sha256Hash":"ecf4"}}}"#
        #expect(post(withDocument)?.operations == operation(.query, "GetUser", persisted: true))
        // Apollo's GET form: the hash in `extensions`, URL-encoded.
        let get = GraphQLCall.detect(
            method: "GET", url: "https://api.test/graphql?operationName=GetUser&variables=%7B%7D&extensions="
                + "%7B%22persistedQuery%22%3A%7B%22version%22%3A1%2C%22sha256Hash%22%3A%22ecf4%22%7D%7D",
            requestContentType: nil, requestBody: nil, responseContentType: nil, responseBody: nil)
        #expect(get?.operations == operation(nil, "GetUser", persisted: true))
    }

    @Test func theGETFormAndApplicationGraphQLBodies() {
        let get = GraphQLCall.detect(method: "GET", url: "https://api.test/graphql?query=query+Me+%7B+me+%7B+id+%7D+%7D"
                                        + "&variables=%7B%7D#top", requestContentType: nil, requestBody: nil,
                                     responseContentType: "application/graphql-response+json",
                                     responseBody: StoredBody(bytes: Array(#"{"data":{"me":{"id":1}}}"#.utf8)))
        #expect(get?.operations == operation(.query, "Me"))
        #expect(get?.errors == 0)
        let document = post("mutation Ping { ping }", contentType: "application/graphql; charset=utf-8")
        #expect(document?.operations == operation(.mutation, "Ping"))
        // operationName from the URL picks the operation of a document sent as application/graphql.
        #expect(post("query A { a } query B { b }", contentType: "application/graphql",
                     url: "https://api.test/graphql?operationName=B")?.operations == operation(.query, "B"))
    }

    @Test func jsonWithAQueryFieldThatIsNoDocumentIsNoGraphQL() {
        #expect(post(#"{"query":"red shoes","page":2}"#) == nil)
        #expect(post(#"{"query":"SELECT * FROM users"}"#) == nil)
        #expect(post(#"{"query":"type Query { a: Int }"}"#) == nil, "a schema is no executable document")
        #expect(post(#"{"query":"query A { a "}"#) == nil, "unbalanced")
        #expect(post(#"{"query":"query A { a ) }"}"#) == nil, "mismatched")
        #expect(post(#"{"query":"query A { a(s: \"open) }"}"#) == nil, "an unterminated string")
        #expect(post(#"{"query":"fragment F on User { id }"}"#) == nil, "fragments alone run nothing")
        #expect(post(#"{"query":7}"#) == nil)
        #expect(post(#"{"search":"query A { a }"}"#) == nil)
        #expect(post("not json", contentType: "application/json") == nil)
        // Past the largest request read (an upload with a `query` key): not parsed, not named.
        let padding = String(repeating: " ", count: GraphQLCall.largestRequest)
        #expect(post(#"{"query":"query Big { a }","pad":"# + "\"\(padding)\"}") == nil)
        #expect(post(#"{"query":"query Small { a }","pad":"# + "\"\(padding.dropLast(100))\"}")?.operations
                == operation(.query, "Small"))
        // The cheap checks: not POST or GET, another content type, a GET without query=.
        #expect(post(#"{"query":"query A { a }"}"#, contentType: "text/plain") == nil)
        #expect(GraphQLCall.detect(method: "PUT", url: nil, requestContentType: "application/json",
                                   requestBody: StoredBody(bytes: Array(#"{"query":"{ a }"}"#.utf8)),
                                   responseContentType: nil, responseBody: nil) == nil)
        #expect(GraphQLCall.detect(method: "GET", url: "https://api.test/search?q=query+A+%7B+a+%7D",
                                   requestContentType: nil, requestBody: nil, responseContentType: nil,
                                   responseBody: nil) == nil)
        #expect(GraphQLCall.detect(method: "GET", url: "https://api.test/search?query=red+shoes",
                                   requestContentType: nil, requestBody: nil, responseContentType: nil,
                                   responseBody: nil) == nil)
    }

    @Test func theResponseErrorsAreCountedAtTheTopLevelOnly() {
        let query = #"{"query":"query Me { me { id } }"}"#
        #expect(post(query, response: #"{"errors":[{"message":"a","path":["me"]},{"message":"b"}],"data":null}"#)?
            .errors == 2)
        #expect(post(query, response: #"{"data":{"me":{"errors":[1,2,3]}},"errors":[]}"#)?.errors == 0)
        #expect(post(query, response: #"{"data":{"me":{"id":"x\"}"}},"errors":null}"#)?.errors == 0)
        #expect(post(query, response: #"{"data":{"me":{"id":1}}}"#)?.errors == 0)
        #expect(post(query, response: #" { "errors" : [ { "message" : "}]" } ] } "#)?.errors == 1)
        // Not JSON, or cut short before the count is known: unknown.
        #expect(post(query, response: "<html>oops</html>", responseType: "text/html")?.errors == nil)
        #expect(post(query, response: #"{"data":{"me":{"id":1"#)?.errors == nil)
        // Errors first, then a data cut to the store's limit: the count is known.
        #expect(post(query, response: #"{"errors":[{"message":"a"}],"data":{"me":{"id":1"#)?.errors == 1)
        #expect(post(query)?.errors == nil)
    }

    /// The stored column reads back as written, and a damaged one as no call.
    @Test func theStoredFormRoundTrips() {
        let call = GraphQLCall(operations: [GraphQLOperation(kind: .query, name: "A\"<b>"),
                                            GraphQLOperation(kind: nil, name: nil, persisted: true)], errors: 3)
        #expect(GraphQLCall(stored: call.storedOperations, errors: 3) == call)
        #expect(GraphQLCall(stored: "not json", errors: nil) == nil)
        #expect(GraphQLCall(stored: nil, errors: 1) == nil)
    }
}
