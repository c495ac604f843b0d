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
    func encode(_ text: UnsafeRawBufferPointer, host: String, plain: @autoclosure () -> SQLValue,
                makeDictionary: ([UInt8]) throws -> Int64) rethrows -> SQLValue {
        guard context != nil, text.count > 64 else { return plain() }
        let limit = Int(Double(text.count) * RecordCoding.goodRatio)
        let own = byHost[host]
        // The host's own dictionary first, then the newest (a new host is often like the last).
        var candidates: [Int64] = own.map { [$0] } ?? []
        if let newest, newest != own { candidates.append(newest) }
        for id in candidates {
            if let value = compress(text, with: id, within: limit) {
                byHost[host] = id
                dictionaries[id]?.uses += 1
                return value
            }
        }
        // No dictionary fits. A large text (bodies in it) is no dictionary for the next ones;
        // a host whose dictionary is new keeps it a while (one odd text is no reason to change).
        let ownIsNew = own.flatMap { dictionaries[$0] }.map { $0.uses < RecordCoding.dictionaryTrial } ?? false
        if text.count > RecordCoding.largestDictionary || ownIsNew {
            return compress(text, with: own ?? newest, within: text.count - RecordCoding.headerSize) ?? plain()
        }
        if dictionaries.count >= RecordCoding.dictionariesKept { reset() }
        let dictionary = Array(text)
        let id = try makeDictionary(dictionary)
        dictionaries[id] = Dictionary(dictionary)
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

    /// Registers `stored_text` on `database`.
    static func register(on database: SQLiteDatabase) throws {
        try database.createFunction("stored_text", arguments: 1, context: RecordDecoder(), call)
    }

    /// Decodes `blob` and hands the text to `body` (valid only during the call).
    func withDecoded<T>(_ blob: UnsafeRawBufferPointer, load: (Int64) -> [UInt8]?,
                        _ body: (Result<UnsafeRawBufferPointer, RecordDecodingError>) -> T) -> T {
        lock.withLock {
            guard blob.count > RecordCoding.headerSize, blob[0] == RecordCoding.tag else {
                return body(.failure(RecordDecodingError("not a compressed flow record")))
            }
            var id: UInt64 = 0
            for index in (1...8).reversed() { id = id << 8 | UInt64(blob[index]) }
            let dictionaryID = Int64(bitPattern: id)
            var dictionary: [UInt8] = []
            if dictionaryID != 0 {
                if let known = dictionaries[dictionaryID] {
                    dictionary = known
                } else if let loaded = load(dictionaryID) {
                    if dictionaries.count >= RecordCoding.dictionariesCached { dictionaries.removeAll() }
                    dictionaries[dictionaryID] = loaded
                    dictionary = loaded
                } else {
                    return body(.failure(RecordDecodingError("its dictionary \(dictionaryID) is missing")))
                }
            }
            let frame = UnsafeRawBufferPointer(rebasing: blob[RecordCoding.headerSize...])
            let size = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
            guard size != ZSTD_CONTENTSIZE_ERROR, size != ZSTD_CONTENTSIZE_UNKNOWN, size <= RecordCoding.largestRecord else {
                return body(.failure(RecordDecodingError("its zstd frame is damaged")))
            }
            if output.count < Int(size) { output = [UInt8](repeating: 0, count: Int(size)) }
            let result: Result<Int, RecordDecodingError> = output.withUnsafeMutableBytes { out in
                dictionary.withUnsafeBytes { dict in
                    let written = ZSTD_decompress_usingDict(context, out.baseAddress, Int(size), frame.baseAddress, frame.count,
                                                            dict.baseAddress, dict.count)
                    if ZSTD_isError(written) != 0 {
                        return .failure(RecordDecodingError(String(cString: ZSTD_getErrorName(written))))
                    }
                    return .success(written)
                }
            }
            defer { if output.count > RecordCoding.bufferKept { output = [] } }
            switch result {
            case .failure(let error):
                return body(.failure(error))
            case .success(let written):
                return output.withUnsafeBytes { body(.success(UnsafeRawBufferPointer(rebasing: $0[0..<written]))) }
            }
        }
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
        decoder.withDecoded(blob, load: { loadDictionary($0, handle: handle) }) { result in
            switch result {
            case .success(let text):
                sqlite3_result_text(context, text.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(text.count),
                                    CSQLite_SQLITE_TRANSIENT())
            case .failure(let error):
                sqlite3_result_error(context, "flow record cannot be read: \(error.reason)", -1)
            }
        }
    }

    /// Dictionary `id` from the file, with a statement of its own (the caller's is mid-step).
    private static func loadDictionary(_ id: Int64, handle: OpaquePointer?) -> [UInt8]? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "SELECT data FROM record_dictionaries WHERE id = ?", -1, &statement, nil) == SQLITE_OK
        else { return nil }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, id)
        guard sqlite3_step(statement) == SQLITE_ROW, let data = sqlite3_column_blob(statement, 0) else { return nil }
        let size = Int(sqlite3_column_bytes(statement, 0))
        return Array(UnsafeRawBufferPointer(start: data, count: size))
    }
}

/// Why a stored record could not be decompressed (a damaged file).
struct RecordDecodingError: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
