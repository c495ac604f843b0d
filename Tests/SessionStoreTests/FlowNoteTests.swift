import Foundation
@testable import SessionStore
import TestSupport
import Testing

/// Flows' marks and comments (`SessionStore.setNote`, `flow_notes`): kept beside the flows, read
/// with their summaries, searched by `~marked`, `~mark COLOUR` and `~comment`, dropped by `clear()`.
@Suite struct FlowNoteTests {
    @Test func aNoteIsSetChangedPartByPartAndRemoved() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        defer { store.close() }
        let marked = try #require(try store.setNote(id: "get-json", mark: .set(.red)))
        #expect(marked.mark == .red && marked.comment == nil)
        // A comment alone leaves the mark.
        let commented = try #require(try store.setNote(id: "get-json", comment: .set("token leaks here")))
        #expect(commented.mark == .red && commented.comment == "token leaks here")
        #expect(try store.summary(id: "get-json")?.mark == .red)
        #expect(try store.summary(id: "get-json")?.comment == "token leaks here")
        #expect(try store.summary(id: "png")?.mark == nil)
        // Pages carry them, in every way a page is read.
        for page in [try store.flows(limit: 100), try store.flows(filter: .all, limit: 100),
                     try store.flows(limit: 100, sort: FlowSort("host"))] {
            let row = try #require(page.flows.first { $0.id == "get-json" })
            #expect(row.mark == .red && row.comment == "token leaks here")
            #expect(page.flows.filter { $0.mark != nil }.count == 1)
        }
        #expect(try store.notes(ids: ["get-json", "png", "nope"])
                == ["get-json": FlowNote(mark: .red, comment: "token leaks here")])
        // Another colour, then the mark removed: the comment stays; an empty comment is none.
        #expect(try store.setNote(id: "get-json", mark: .set(.blue))?.mark == .blue)
        #expect(try store.setNote(id: "get-json", mark: .set(nil))?.comment == "token leaks here")
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flow_notes") == 1)
        let cleared = try #require(try store.setNote(id: "get-json", comment: .set("")))
        #expect(cleared.mark == nil && cleared.comment == nil)
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flow_notes") == 0, "an empty note is no row")
        #expect(try store.setNote(id: "no-such-flow", mark: .set(.red)) == nil)
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flow_notes") == 0)
    }

    /// A comment past 2,000 characters is refused whole, the note as it was; 2,000 are kept.
    @Test func aCommentIsAtMost2000Characters() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        defer { store.close() }
        let longest = String(repeating: "é", count: FlowNote.maximumCommentLength)
        #expect(try store.setNote(id: "png", comment: .set(longest))?.comment == longest)
        #expect(throws: SessionStoreError.self) {
            try store.setNote(id: "png", mark: .set(.red), comment: .set(longest + "x"))
        }
        #expect(try store.summary(id: "png")?.comment == longest)
        #expect(try store.summary(id: "png")?.mark == nil)
        #expect(FlowNote.refusal(ofComment: longest + "x") == "a comment is at most 2000 characters, not 2001")
    }

    /// Setting a note writes through a connection of its own, not the writer's queue: the
    /// `flows` rows stay as the writer left them, and observers hear of the change.
    @Test func aNoteLeavesTheFlowsRowsAndTellsTheObservers() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        defer { store.close() }
        let rowBefore = try store.flows(limit: 100).flows.first { $0.id == "png" }
        let heard = Heard()
        store.addObserver { heard.append($0) }
        try store.setNote(id: "png", mark: .set(.green), comment: .set("why so big"))
        var expected = try #require(rowBefore)
        expected.mark = .green
        expected.comment = "why so big"
        #expect(heard.all == [StoreChanges(cleared: false, flows: [expected])])
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flows WHERE id = 'png'") == 1)
        #expect(store.drops.records == 0 && store.drops.bodies == 0)
    }

    /// `clear()` drops the notes with the flows: a flow written later under a new number has none.
    @Test func clearDropsTheNotes() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        defer { store.close() }
        try store.setNote(id: "png", mark: .set(.red), comment: .set("x"))
        store.clear()
        #expect(try SQLitePeek.integer(store.path, "SELECT count(*) FROM flow_notes") == 0)
        store.finished(StoreFixtures.record("png"), json: StoreFixtures.json("png"), bodies: FlowBodies())
        store.flush()
        #expect(try store.summary(id: "png")?.mark == nil)
        #expect(try store.count(filter: try FilterExpression(parsing: "~marked")) == 0)
    }

    /// A session of the previous schema (9, before `flow_notes`) opens with its flows, read-only
    /// (`devproxy web FILE`) or to write, and takes notes; the notes outlive reopening.
    @Test func aSessionOfThePreviousVersionOpensKeepsItsFlowsAndTakesNotes() throws {
        let directory = TemporaryDirectory()
        try StoreFixtures.store(in: directory).close()
        let path = directory.file("session.sqlite")
        // As devproxy 9 left it: no flow_notes, nor what later versions added (graphql, 11; mapped, 12; client, 13).
        try SQLitePeek.execute(path, """
            DROP TABLE flow_notes; ALTER TABLE flows DROP COLUMN graphql; ALTER TABLE flows DROP COLUMN graphql_errors;
            ALTER TABLE flows DROP COLUMN mapped; ALTER TABLE flows DROP COLUMN client;
            ALTER TABLE flows DROP COLUMN replay_of; ALTER TABLE flows DROP COLUMN client_process;
            ALTER TABLE flows DROP COLUMN client_exe; ALTER TABLE flows DROP COLUMN client_pid;
            PRAGMA user_version = 9
            """)
        let viewed = try SessionStore(path: path, readOnly: true)
        #expect(try SQLitePeek.userVersion(path) == Schema.version)
        #expect(try viewed.count() == StoreFixtures.flows.count)
        #expect(viewed.noteRefusal == nil, "a writable saved session can be marked")
        #expect(try viewed.setNote(id: "not-found", mark: .set(.orange), comment: .set("reviewed"))?.mark == .orange)
        #expect(try viewed.count(filter: try FilterExpression(parsing: "~mark orange")) == 1)
        viewed.close()
        let reopened = try SessionStore(path: path)
        #expect(try reopened.count() == StoreFixtures.flows.count)
        #expect(try reopened.summary(id: "not-found")?.comment == "reviewed")
        #expect(try reopened.flowJSON(id: "get-json") == StoreFixtures.json("get-json"))
        reopened.close()
    }

    /// `~marked`, `~mark COLOUR` and `~comment REGEX` select the noted flows, over the whole
    /// session and over a live batch (`matchingIDs`) alike, and combine with the other atoms.
    @Test func theFiltersSelectTheNotedFlows() throws {
        let directory = TemporaryDirectory()
        let store = try StoreFixtures.store(in: directory)
        defer { store.close() }
        try store.setNote(id: "get-json", mark: .set(.red), comment: .set("Token LEAK in body"))
        try store.setNote(id: "png", mark: .set(.blue))
        try store.setNote(id: "not-found", comment: .set("expected 404?"))
        let table: [(String, Set<String>)] = [
            ("~marked", ["get-json", "png"]),
            ("~mark red", ["get-json"]),
            ("~mark BLUE", ["png"]),
            ("~mark green", []),
            ("~comment leak", ["get-json"]),
            ("~comment '^expected \\d+'", ["not-found"]),
            ("~comment .", ["get-json", "not-found"]),
            ("~marked | ~comment .", ["get-json", "png", "not-found"]),
            ("~marked & ~c 200", ["get-json", "png"]),
            ("!~marked & ~d example\\.com$", ["failed", "not-found", "post-form", "socket"]),
        ]
        let batch = ["get-json", "png", "not-found", "socket", "no-such-flow"]
        for (text, expected) in table {
            let expression = try FilterExpression(parsing: text)
            let everywhere = Set(try store.flows(filter: expression, limit: 100).flows.map(\.id))
            #expect(everywhere == expected, "\(text)")
            #expect(try store.matchingIDs(batch, filter: expression) == expected.intersection(batch), "\(text)")
        }
    }

    @Test func theFiltersParse() throws {
        #expect(try FilterExpression(parsing: "~marked") == .marked(nil))
        #expect(try FilterExpression(parsing: "~MARKED & ~mark Purple") == .and(.marked(nil), .marked(.purple)))
        #expect(try FilterExpression(parsing: "~comment 'why not'") == .comment(pattern: "why not"))
        let refusals: [(String, String)] = [
            ("~mark pink",
             "'~mark' needs a colour (red, orange, yellow, green, blue or purple), not 'pink' at column 7"),
            ("~mark", "expected a colour (red, orange, yellow, green, blue or purple) after '~mark' at column 6"),
            ("~comment", "expected a pattern after '~comment' at column 9"),
            ("~comment a[", "'a[' is not a valid regular expression at column 10"),
        ]
        for (text, reason) in refusals {
            #expect(throws: FilterSyntaxError.self) { try FilterExpression(parsing: text) }
            do { _ = try FilterExpression(parsing: text) } catch { #expect(error.description == reason, "\(text)") }
        }
    }
}

/// What an observer heard, from the thread it was called on.
private final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [StoreChanges] = []
    func append(_ change: StoreChanges) { lock.withLock { changes.append(change) } }
    var all: [StoreChanges] { lock.withLock { changes } }
}
