import SessionStore
import TestSupport
import Testing

/// `SessionStore.matchingIDs`: the filter evaluated over a few given flows (a live batch) agrees
/// with the same filter run over the whole session, for column, header and body atoms alike.
@Suite struct MatchingIDsTests {
    @Test func aBatchMatchesExactlyAsTheWholeSessionDoes() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        defer { store.close() }
        // Some fixture flows, one id the session does not have; the rest of the session is left out.
        let batch = ["get-json", "post-form", "png", "pending", "socket", "no-such-flow"]
        let expressions = ["~c 404", "~q", "~d example\\.com$", "~h set-cookie", "~hq accept", "~b s3cr3t",
                           "~bq hunter2", "~bs magic", "~bs tick", "~bq subscribe", "~t json | ~websocket", "!~b s3cr3t", "~persona team & ~s",
                           "~all"]
        for text in expressions {
            let expression = try FilterExpression(parsing: text)
            let everywhere = Set(try store.flows(filter: expression, limit: 100).flows.map(\.id))
            let expected = everywhere.intersection(batch)
            #expect(try store.matchingIDs(batch, filter: expression) == expected, "\(text)")
        }
        #expect(try store.matchingIDs([], filter: try FilterExpression(parsing: "~all")).isEmpty)
    }

    @Test func aFlowThatGetsItsStatusLaterStartsMatching() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory, flows: [])
        defer { store.close() }
        let notFound = try FilterExpression(parsing: "~c 404")
        store.started(StoreFixtures.record("late", status: nil))
        store.flush()
        #expect(try store.matchingIDs(["late"], filter: notFound).isEmpty)
        store.responded(StoreFixtures.record("late", status: 404))
        store.flush()
        #expect(try store.matchingIDs(["late"], filter: notFound) == ["late"])
    }
}
