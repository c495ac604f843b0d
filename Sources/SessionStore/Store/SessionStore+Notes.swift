/// Flows' notes: a mark and a comment per flow, in `flow_notes` by the flow's `seq`.
extension SessionStore {
    /// Why this store cannot keep notes (a session file opened read-only that is not writable),
    /// or nil when it can.
    public var noteRefusal: String? { notes.refusal }

    /// Changes flow `id`'s mark and comment, and tells the observers (the web UI's live stream)
    /// the flow's summary as it is now.
    ///
    /// Written at once through a connection of its own (`NoteWriter`), not through the writer's
    /// queue: a flow can be marked while it runs, in a session opened read-only, or while the
    /// writer is busy. A note with neither a mark nor a comment is deleted.
    /// - Parameters:
    ///   - mark: `.set(nil)` removes the mark, `.keep` leaves it.
    ///   - comment: `.set(nil)` or `.set("")` removes the comment, `.keep` leaves it.
    /// - Returns: the flow's summary with its note, nil when the session has no flow `id`.
    /// - Throws: `SessionStoreError(.note)` when the comment is longer than
    ///   `FlowNote.maximumCommentLength` or the file is not writable; `.sqlite` when SQLite refuses.
    @discardableResult
    public func setNote(id: String, mark: FlowNoteChange<FlowMark> = .keep,
                        comment: FlowNoteChange<String> = .keep) throws -> FlowSummary? {
        if case .set(let text?) = comment, let refusal = FlowNote.refusal(ofComment: text) {
            throw SessionStoreError(.note, refusal)
        }
        let written = try notes.write { database -> Bool in
            let rows = try database.rows("""
                SELECT f.seq, n.mark, n.comment FROM flows f LEFT JOIN flow_notes n ON n.seq = f.seq WHERE f.id = ?
                """, [.text(id)]) { ($0.int64(0) ?? 0, $0.string(1).flatMap(FlowMark.init(name:)), $0.string(2)) }
            guard let (sequence, currentMark, currentComment) = rows.first else { return false }
            let note = FlowNote(mark: mark.applied(to: currentMark), comment: comment.applied(to: currentComment))
            if note.isEmpty {
                try database.statement("DELETE FROM flow_notes WHERE seq = ?").run([.integer(sequence)])
            } else {
                try database.statement("INSERT OR REPLACE INTO flow_notes (seq, mark, comment) VALUES (?, ?, ?)")
                    .run([.integer(sequence), note.mark.map { .text($0.rawValue) } ?? .null,
                          note.comment.map { .text($0) } ?? .null])
            }
            return true
        }
        guard written, let summary = try summary(id: id) else { return nil }
        observers.deliver(StoreChanges(cleared: false, flows: [summary]))
        return summary
    }

    /// Whether any flow of the session has a note: a live batch of flows looks their notes up only
    /// then (one look-up of an empty table, not one per flow).
    public func hasNotes() throws -> Bool {
        try read { try $0.integer("SELECT EXISTS (SELECT 1 FROM flow_notes)") != 0 }
    }

    /// The notes of those of `ids` that have one, by id. Notes are few (a person wrote each): they
    /// are read first (`CROSS JOIN` keeps SQLite from starting with the ids), each joined to its flow.
    public func notes(ids: [String]) throws -> [String: FlowNote] {
        guard !ids.isEmpty else { return [:] }
        var result: [String: FlowNote] = [:]
        // SQLite allows 32,766 parameters; pages and event batches are far smaller, but stay safe.
        for start in stride(from: 0, to: ids.count, by: 500) {
            let chunk = ids[start..<min(start + 500, ids.count)].map { SQLValue.text($0) }
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let rows = try read { database in
                try database.rows("""
                    SELECT f.id, n.mark, n.comment FROM flow_notes n CROSS JOIN flows f ON f.seq = n.seq
                    WHERE f.id IN (\(marks))
                    """, chunk) { ($0.string(0), FlowNote(mark: $0.string(1).flatMap(FlowMark.init(name:)),
                                                          comment: $0.string(2))) }
            }
            for case let (id?, note) in rows where !note.isEmpty { result[id] = note }
        }
        return result
    }
}
