import CCompression
import CSQLite
import Foundation

/// How a flow's record (the flow log's JSON, `flow_records.json`) and its header blocks
/// (`flow_heads`) are kept: compressed with zstd against a dictionary that is an earlier record
/// (or block) of the same session (`record_dictionaries`).
///
/// Consecutive flows to one host repeat almost all of their JSON (field names, headers, the TLS
/// chain, the signer), so against one of them a ~1.7 KB record comes out at 60–300 bytes; zstd
/// without a dictionary only halves it. The store writes every byte twice (the WAL, then the
/// checkpoint into the file), and on the benchmark's keep-alive cell those bytes were about half
/// of the store's cost per flow (docs/performance.md, "Run 16").
///
/// A stored value is TEXT (kept as it is: older files, a short text, one no dictionary fits) or
/// a BLOB: `RecordCoding.tag`, the dictionary's id (8 bytes, little-endian), one zstd frame.
/// Readers see text either way: SQL reads `stored_text(column)` (`RecordDecoder`).
enum RecordCoding {
    /// The first byte of a compressed record.
    static let tag: UInt8 = 1
    /// Tag and dictionary id.
    static let headerSize = 9
    /// Records larger than this (bodies in the JSON) never become a dictionary.
    static let largestDictionary = 16 * 1024
    /// A compressed record must be at most this fraction of the plain one, or its host gets a
    /// new dictionary (once the old one has served `dictionaryTrial` records).
    static let goodRatio = 0.5
    static let dictionaryTrial = 16
    /// Dictionaries the writer keeps in memory; past it, it forgets them all and starts over.
    static let dictionariesKept = 64
    /// Dictionaries a reader keeps once read; past it, it forgets them all.
    static let dictionariesCached = 256
    /// A work buffer larger than this (a record carrying bodies) is let go after use.
    static let bufferKept = 256 * 1024
    /// A frame of several flows' texts (`RecordFrames`) is written once it holds this many bytes.
    static let frameTarget = 64 * 1024
    /// Frames of several records (`RecordFrames`) a reader keeps decoded.
    static let framesCached = 4
    /// The largest text a frame may claim to hold.
    static let largestRecord: UInt64 = 512 * 1024 * 1024
    /// zstd's level: its fastest that still finds the long matches a dictionary offers.
    static let level: Int32 = 1
}

/// The writer's side: picks a dictionary for each text, makes new ones, compresses. One per kind
/// of text (records, request header blocks, response header blocks), keyed by host; owned by the
/// store's writer thread.
final class RecordCompressor {
    /// A dictionary and zstd's prepared form of it (its match tables built once, not for every
    /// text: ~30 % of a record's compression time, measured with a C program on the benchmark's
    /// h2 records).
    private final class Dictionary {
        let prepared: OpaquePointer?
        /// Records compressed against it since it was made.
        var uses = 0

        init(_ bytes: [UInt8]) {
            prepared = bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, RecordCoding.level) }
        }

        deinit { ZSTD_freeCDict(prepared) }
    }

    private var dictionaries: [Int64: Dictionary] = [:]
    /// The dictionary each host's records go against.
    private var byHost: [String: Int64] = [:]
    /// The newest dictionary: the first try for a host that has none yet.
    private var newest: Int64?
    private let context: OpaquePointer?
    private var output: [UInt8] = []

    init() {
        context = ZSTD_createCCtx()
    }

    deinit { ZSTD_freeCCtx(context) }

    /// Forgets every dictionary (after `clear`, or a rolled-back batch that may have made some).
    func reset() {
        dictionaries.removeAll()
        byHost.removeAll()
        newest = nil
    }

    /// The value to store for `text` (UTF-8), a text of a flow to `host`: compressed, or `plain`
    /// when no dictionary makes it small enough. `makeDictionary` stores a text as a new
    /// dictionary and returns its id.
    /// - Parameters:
    ///   - sample: what a new dictionary is made of (a record of a frame of several:
    ///     `RecordFrames`); the text itself when nil.
    ///   - records: how many records `text` holds (each counts as a use of the dictionary).
    func encode(_ text: UnsafeRawBufferPointer, host: String, sample: UnsafeRawBufferPointer? = nil, records: Int = 1,
                plain: @autoclosure () -> SQLValue, makeDictionary: ([UInt8]) throws -> Int64) rethrows -> SQLValue {
        guard context != nil, text.count > 64 else { return plain() }
        let sample = sample ?? text
        let limit = Int(Double(text.count) * RecordCoding.goodRatio)
        let own = byHost[host]
        // The host's own dictionary first, then the newest (a new host is often like the last).
        var candidates: [Int64] = own.map { [$0] } ?? []
        if let newest, newest != own { candidates.append(newest) }
        for id in candidates {
            if let value = compress(text, with: id, within: limit) {
                byHost[host] = id
                dictionaries[id]?.uses += records
                return value
            }
        }
        // No dictionary fits. A large text (bodies in it) is no dictionary for the next ones;
        // a host whose dictionary is new keeps it a while (one odd text is no reason to change).
        let ownIsNew = own.flatMap { dictionaries[$0] }.map { $0.uses < RecordCoding.dictionaryTrial } ?? false
        if sample.count > RecordCoding.largestDictionary || ownIsNew {
            return compress(text, with: own ?? newest, within: text.count - RecordCoding.headerSize) ?? plain()
        }
        if dictionaries.count >= RecordCoding.dictionariesKept { reset() }
        let dictionary = Array(sample)
        let id = try makeDictionary(dictionary)
        dictionaries[id] = Dictionary(dictionary)
        // The record it is made of does not count as a use; the others of a frame do.
        dictionaries[id]?.uses = records - 1
        byHost[host] = id
        newest = id
        return compress(text, with: id, within: text.count - RecordCoding.headerSize) ?? plain()
    }

    /// `text` compressed against dictionary `id` (none: plain zstd), as a stored BLOB; nil when
    /// that is larger than `limit` bytes of frame.
    private func compress(_ text: UnsafeRawBufferPointer, with id: Int64?, within limit: Int) -> SQLValue? {
        guard limit > 0 else { return nil }
        let prepared = id.flatMap { dictionaries[$0]?.prepared }
        if id != nil && prepared == nil { return nil }
        let capacity = ZSTD_compressBound(text.count)
        if output.count < RecordCoding.headerSize + capacity {
            output = [UInt8](repeating: 0, count: RecordCoding.headerSize + capacity)
        }
        let written = output.withUnsafeMutableBytes { out in
            let frame = out.baseAddress! + RecordCoding.headerSize
            if let prepared {
                return ZSTD_compress_usingCDict(context, frame, capacity, text.baseAddress, text.count, prepared)
            }
            return ZSTD_compressCCtx(context, frame, capacity, text.baseAddress, text.count, RecordCoding.level)
        }
        defer { if output.count > RecordCoding.bufferKept { output = [] } }
        guard ZSTD_isError(written) == 0, written <= limit else { return nil }
        output[0] = RecordCoding.tag
        var little = UInt64(bitPattern: id ?? 0).littleEndian
        withUnsafeBytes(of: &little) { raw in
            for index in 0..<8 { output[1 + index] = raw[index] }
        }
        return .blob(Array(output.prefix(RecordCoding.headerSize + written)))
    }
}

/// The readers' side: `stored_text(value)`, a stored record as its JSON text (TEXT as it is, a
/// compressed BLOB decompressed; NULL stays NULL). Dictionaries are read from the file on first
/// use and kept: their ids are AUTOINCREMENT, so an id never names another dictionary later.
final class RecordDecoder: @unchecked Sendable {
    // Guarded by `lock`: a connection's functions may run on whichever thread reads through it.
    private let lock = NSLock()
    private var dictionaries: [Int64: [UInt8]] = [:]
    private let context = ZSTD_createDCtx()
    private var output: [UInt8] = []

    deinit { ZSTD_freeDCtx(context) }

    /// Registers `stored_text`, `stored_head`, `stored_body` and `stored_body_section` (one decoder,
    /// so they share its frames) on `database`.
    static func register(on database: SQLiteDatabase) throws {
        let decoder = RecordDecoder()
        try database.createFunction("stored_text", arguments: 1, context: decoder, call)
        try database.createFunction("stored_head", arguments: 2, context: decoder, callHead)
        try database.createFunction("stored_body", arguments: 2, context: decoder, callBody)
        try database.createFunction("stored_body_section", arguments: 2, context: decoder, callBodySection)
    }

    /// Decodes `blob` and hands the text to `body` (valid only during the call).
    func withDecoded<T>(_ blob: UnsafeRawBufferPointer, load: (Int64) -> [UInt8]?,
                        _ body: (Result<UnsafeRawBufferPointer, RecordDecodingError>) -> T) -> T {
        lock.withLock {
            defer { if output.count > RecordCoding.bufferKept { output = [] } }
            switch decodeLocked(blob, load: load) {
            case .failure(let error):
                return body(.failure(error))
            case .success(let written):
                return output.withUnsafeBytes { body(.success(UnsafeRawBufferPointer(rebasing: $0[0..<written]))) }
            }
        }
    }

    /// Decodes a compressed `blob` into `output`; how many bytes it holds. Called with `lock` held.
    private func decodeLocked(_ blob: UnsafeRawBufferPointer, load: (Int64) -> [UInt8]?) -> Result<Int, RecordDecodingError> {
        guard blob.count > RecordCoding.headerSize, blob[0] == RecordCoding.tag else {
            return .failure(RecordDecodingError("not a compressed flow record"))
        }
        let dictionaryID = Int64(bitPattern: LittleEndian.read(blob, at: 1, width: 8))
        var dictionary: [UInt8] = []
        if dictionaryID != 0 {
            if let known = dictionaries[dictionaryID] {
                dictionary = known
            } else if let loaded = load(dictionaryID) {
                if dictionaries.count >= RecordCoding.dictionariesCached { dictionaries.removeAll() }
                dictionaries[dictionaryID] = loaded
                dictionary = loaded
            } else {
                return .failure(RecordDecodingError("its dictionary \(dictionaryID) is missing"))
            }
        }
        let frame = UnsafeRawBufferPointer(rebasing: blob[RecordCoding.headerSize...])
        let size = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
        guard size != ZSTD_CONTENTSIZE_ERROR, size != ZSTD_CONTENTSIZE_UNKNOWN, size <= RecordCoding.largestRecord else {
            return .failure(RecordDecodingError("its zstd frame is damaged"))
        }
        if output.count < Int(size) { output = [UInt8](repeating: 0, count: Int(size)) }
        return output.withUnsafeMutableBytes { out in
            dictionary.withUnsafeBytes { dict in
                let written = ZSTD_decompress_usingDict(context, out.baseAddress, Int(size), frame.baseAddress, frame.count,
                                                        dict.baseAddress, dict.count)
                if ZSTD_isError(written) != 0 {
                    return .failure(RecordDecodingError(String(cString: ZSTD_getErrorName(written))))
                }
                return .success(written)
            }
        }
    }

    /// Frames of several flows' texts (`RecordFrames`) read lately, newest last: the flows of a
    /// page or a filter's scan come in order, so one frame serves the rows that follow.
    private var frames: [(id: Int64, text: [UInt8])] = []

    /// Hands `body` one part of the texts `reference` points at (nil: the flow has no such
    /// part, as a request that is still running has no response head).
    func withPart<T>(_ part: RecordReference.Part, of reference: RecordReference, handle: OpaquePointer?,
                     _ body: (Result<UnsafeRawBufferPointer?, RecordDecodingError>) -> T) -> T {
        lock.withLock {
            let text: [UInt8]
            switch frameLocked(reference.frame, handle: handle) {
            case .failure(let error): return body(.failure(error))
            case .success(let found): text = found
            }
            guard let range = reference.range(of: part) else { return body(.success(nil)) }
            guard range.upperBound <= text.count else {
                return body(.failure(RecordDecodingError("it points past the end of frame \(reference.frame)")))
            }
            return text.withUnsafeBytes { body(.success(UnsafeRawBufferPointer(rebasing: $0[range]))) }
        }
    }

    /// Frame `id`'s text, from `frames` or read from the file and decoded. Called with `lock` held.
    private func frameLocked(_ id: Int64, handle: OpaquePointer?) -> Result<[UInt8], RecordDecodingError> {
        if let cached = frames.last(where: { $0.id == id }) { return .success(cached.text) }
        guard let stored = Self.loadFrame(id, handle: handle) else {
            return .failure(RecordDecodingError("its frame \(id) is missing"))
        }
        let text: [UInt8]
        if stored.isBlob {
            let decoded = stored.bytes.withUnsafeBytes { decodeLocked($0, load: { Self.loadDictionary($0, handle: handle) }) }
            switch decoded {
            case .failure(let error): return .failure(error)
            case .success(let count): text = Array(output.prefix(count))
            }
            if output.count > RecordCoding.bufferKept { output = [] }
        } else {
            text = stored.bytes
        }
        if frames.count >= RecordCoding.framesCached { frames.removeFirst() }
        frames.append((id, text))
        return .success(text)
    }

    private static let call: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard let context, count == 1, let arguments, let value = arguments[0] else { return }
        guard sqlite3_value_type(value) == SQLITE_BLOB else {
            // TEXT (a record kept as it is) or NULL: itself.
            sqlite3_result_value(context, value)
            return
        }
        let decoder = Unmanaged<RecordDecoder>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
        let bytes = sqlite3_value_blob(value)
        let blob = UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : Int(sqlite3_value_bytes(value)))
        let handle = sqlite3_context_db_handle(context)
        if let reference = RecordReference(blob) {
            decoder.withPart(.record, of: reference, handle: handle) { result($0, context) }
            return
        }
        decoder.withDecoded(blob, load: { loadDictionary($0, handle: handle) }) { result($0.map { $0 }, context) }
    }

    /// `stored_head(value, part)`: the request's (part 0) or response's (1) header text of a flow
    /// whose record is in a frame (`RecordReference`); NULL for any other value, and for a part
    /// the flow does not have.
    private static let callHead: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard let context, count == 2, let arguments else { return }
        withFramedPart(context, arguments, (.request, .response)) { result($0, context) }
    }

    /// Calls `body` with the part of a frame that a function's arguments (a reference, and 0 or 1
    /// for the first or second of `parts`) name; sets NULL when the value is no reference.
    private static func withFramedPart(_ context: OpaquePointer, _ arguments: UnsafeMutablePointer<OpaquePointer?>,
                                       _ parts: (RecordReference.Part, RecordReference.Part),
                                       _ body: (Result<UnsafeRawBufferPointer?, RecordDecodingError>) -> Void) {
        guard let value = arguments[0], let partValue = arguments[1] else { return }
        let bytes = sqlite3_value_type(value) == SQLITE_BLOB ? sqlite3_value_blob(value) : nil
        guard let reference = RecordReference(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0
                                                                       : Int(sqlite3_value_bytes(value)))) else {
            sqlite3_result_null(context)
            return
        }
        let decoder = Unmanaged<RecordDecoder>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
        decoder.withPart(sqlite3_value_int(partValue) == 0 ? parts.0 : parts.1, of: reference,
                         handle: sqlite3_context_db_handle(context), body)
    }

    /// `stored_body(value, part)`: what `~b` searches of a body kept in its flow's frame
    /// (`FramedBody`): its text when it has one (TEXT), else its bytes (BLOB); NULL when the flow's
    /// body is not in a frame.
    private static let callBody: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, count, arguments in
        guard let context, count == 2, let arguments else { return }
        withBodySection(context, arguments) { section in
            guard let parts = FramedBody.parts(section) else {
                sqlite3_result_error(context, "flow record cannot be read: a damaged body section", -1)
                return
            }
            if let text = parts.text ?? (parts.bytesAreText ? parts.bytes : nil) {
                result(.success(UnsafeRawBufferPointer(rebasing: section[text])), context)
            } else if parts.bytes.isEmpty {
                sqlite3_result_zeroblob(context, 0)
            } else {
                sqlite3_result_blob64(context, section.baseAddress! + parts.bytes.lowerBound, UInt64(parts.bytes.count),
                                      CSQLite_SQLITE_TRANSIENT())
            }
        }
    }

    /// `stored_body_section(value, part)`: the section of a body kept in its flow's frame, as a
    /// BLOB (`FramedBody.decode` reads it); NULL when the flow's body is not in a frame.
    private static let callBodySection: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?)
        -> Void = { context, count, arguments in
        guard let context, count == 2, let arguments else { return }
        withBodySection(context, arguments) { section in
            sqlite3_result_blob64(context, section.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, UInt64(section.count),
                                  CSQLite_SQLITE_TRANSIENT())
        }
    }

    /// Calls `body` with the body section that a body function's arguments (a reference, a part)
    /// name; sets NULL when there is none, or the error.
    private static func withBodySection(_ context: OpaquePointer, _ arguments: UnsafeMutablePointer<OpaquePointer?>,
                                        _ body: (UnsafeRawBufferPointer) -> Void) {
        withFramedPart(context, arguments, (.requestBody, .responseBody)) { outcome in
            if case .success(let section?) = outcome { body(section) } else { result(outcome, context) }
        }
    }

    /// Sets a function's result: the text, NULL for none, or the error.
    private static func result(_ outcome: Result<UnsafeRawBufferPointer?, RecordDecodingError>, _ context: OpaquePointer) {
        switch outcome {
        case .success(let text?):
            if let base = text.baseAddress {
                sqlite3_result_text(context, base.assumingMemoryBound(to: CChar.self), Int32(text.count),
                                    CSQLite_SQLITE_TRANSIENT())
            } else {
                sqlite3_result_text(context, "", 0, CSQLite_SQLITE_TRANSIENT())
            }
        case .success(nil):
            sqlite3_result_null(context)
        case .failure(let error):
            sqlite3_result_error(context, "flow record cannot be read: \(error.reason)", -1)
        }
    }

    /// Frame `id`'s stored value: compressed (`RecordCoding`, a BLOB) or its text as it is.
    private static func loadFrame(_ id: Int64, handle: OpaquePointer?) -> (bytes: [UInt8], isBlob: Bool)? {
        loadValue("SELECT data FROM record_frames WHERE id = ?", id, handle: handle)
    }

    /// Dictionary `id` from the file.
    private static func loadDictionary(_ id: Int64, handle: OpaquePointer?) -> [UInt8]? {
        loadValue("SELECT data FROM record_dictionaries WHERE id = ?", id, handle: handle)
            .flatMap { $0.isBlob && !$0.bytes.isEmpty ? $0.bytes : nil }
    }

    /// The one value `sql` selects for `id`, with a statement of its own (the caller's is
    /// mid-step), and whether it is a BLOB; nil when there is no such row.
    private static func loadValue(_ sql: StaticString, _ id: Int64, handle: OpaquePointer?) -> (bytes: [UInt8], isBlob: Bool)? {
        var statement: OpaquePointer?
        let prepared = sql.withUTF8Buffer { text in
            text.withMemoryRebound(to: CChar.self) { sqlite3_prepare_v2(handle, $0.baseAddress, Int32($0.count), &statement, nil) }
        }
        guard prepared == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, id)
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        let isBlob = sqlite3_column_type(statement, 0) == SQLITE_BLOB
        // The pointer first, then its size (SQLite's rule for reading a column).
        let data = isBlob ? sqlite3_column_blob(statement, 0) : UnsafeRawPointer(sqlite3_column_text(statement, 0))
        let size = Int(sqlite3_column_bytes(statement, 0))
        guard let data else { return ([], isBlob) }
        return (Array(UnsafeRawBufferPointer(start: data, count: size)), isBlob)
    }
}

/// Why a stored record could not be decompressed (a damaged file).
struct RecordDecodingError: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
