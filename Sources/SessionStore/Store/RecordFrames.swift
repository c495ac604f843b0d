/// Flow records kept several to a frame: the writer gathers the records (and header blocks) of
/// the flows one batch finishes into one text, compresses it once, and stores it as a row of
/// `record_frames`; each flow's row in `flows` gets a `RecordReference` to its part of it.
///
/// zstd spends ~13k instructions on every frame before the first byte (its match state and
/// entropy tables), more than compressing a 1.8 KB record against a dictionary costs; a frame of
/// 30–40 records costs ~6k a record instead of ~18k (callgrind, docs/performance.md, "Run 25"),
/// and a flow is one row written instead of three (`flows`, `flow_records`, `flow_heads`).
/// Under light traffic a batch is one flow, and its frame is what a record alone was before.
///
/// Reading one flow decodes its frame (at most `RecordCoding.frameTarget` plus one record, ~40 µs);
/// a reader keeps the last few decoded (`RecordDecoder`), so a page or a filter's scan, which
/// read flows in order, decodes each frame once.

/// Where a flow's texts are: frame `frame`, from `offset`, the record, then its request's and
/// response's header texts (`FlowRecord.headerText`), then its request's and response's bodies
/// when they are small (`FramedBody`), each present or not.
///
/// Stored as a 33-byte BLOB: `tag`, the frame's id (8 bytes), the offset and the five lengths
/// (4 bytes each, `absent` for a missing part), all little-endian.
struct RecordReference: Equatable {
    enum Part { case record, request, response, requestBody, responseBody }

    static let tag: UInt8 = 2
    static let size = 33
    static let absent = UInt32.max

    var frame: Int64
    var offset: Int
    /// The lengths of the record and of each part after it, in frame order (nil: absent).
    var lengths: [Int?]

    init(frame: Int64, offset: Int, lengths: [Int?]) {
        precondition(lengths.count == 5 && lengths[0] != nil, "a reference names a record and four parts")
        (self.frame, self.offset, self.lengths) = (frame, offset, lengths)
    }

    /// The reference `bytes` hold; nil when they are anything else (a record kept whole, text).
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.size, bytes[0] == Self.tag else { return nil }
        frame = Int64(bitPattern: LittleEndian.read(bytes, at: 1, width: 8))
        offset = Int(LittleEndian.read(bytes, at: 9, width: 4))
        lengths = (0..<5).map { index in
            let value = UInt32(LittleEndian.read(bytes, at: 13 + 4 * index, width: 4))
            return value == Self.absent ? nil : Int(value)
        }
        guard lengths[0] != nil else { return nil }
    }

    var bytes: [UInt8] {
        var out: [UInt8] = [Self.tag]
        out.reserveCapacity(Self.size)
        LittleEndian.append(UInt64(bitPattern: frame), width: 8, to: &out)
        LittleEndian.append(UInt64(offset), width: 4, to: &out)
        for length in lengths { LittleEndian.append(length.map { UInt64($0) } ?? UInt64(Self.absent), width: 4, to: &out) }
        return out
    }

    /// Where `part` lies in the frame's text; nil for a part the flow does not have.
    func range(of part: Part) -> Range<Int>? {
        let index: Int
        switch part {
        case .record: index = 0
        case .request: index = 1
        case .response: index = 2
        case .requestBody: index = 3
        case .responseBody: index = 4
        }
        guard let length = lengths[index] else { return nil }
        let start = offset + lengths[..<index].reduce(0) { $0 + ($1 ?? 0) }
        return start..<start + length
    }
}

/// A small body kept in its flow's frame (the writer's choice: `takes`) rather than as a row of
/// `bodies`: a row costs its flow ~10k instructions, the section a copy of its bytes.
///
/// A section: a flags byte (1: the bytes are their own text, 2: a text follows them), the size of
/// the whole body (8 bytes), the SHA-256's length (1 byte, 0 for none) and its hex, the bytes'
/// length (4 bytes) and the bytes, then with flag 2 the text's length (4 bytes) and the text;
/// lengths little-endian.
enum FramedBody {
    /// The largest body (bytes, or text beside them) a frame takes.
    static let largest = 16 * 1024

    /// Whether `body` (already cut to the store's limit) goes in its flow's frame.
    static func takes(_ body: StoredBody) -> Bool {
        body.spooled == nil && !body.isEmptyAsStored && body.bytes.count <= largest
            && (body.text?.utf8.count ?? 0) <= largest && (body.sha256?.utf8.count ?? 0) <= 255
    }

    /// `body` as a section.
    static func encode(_ body: StoredBody) -> [UInt8] {
        let bytesAreText = body.text.map { StoreWriter.isSameText($0, body.bytes) } ?? false
        let hasText = body.text != nil && !bytesAreText
        var out: [UInt8] = []
        out.reserveCapacity(18 + body.bytes.count + (body.sha256?.utf8.count ?? 0) + (hasText ? body.text!.utf8.count : 0))
        out.append((bytesAreText ? 1 : 0) | (hasText ? 2 : 0))
        func append(_ value: Int, _ width: Int) { LittleEndian.append(UInt64(value), width: width, to: &out) }
        append(body.size, 8)
        append(body.sha256?.utf8.count ?? 0, 1)
        out.append(contentsOf: (body.sha256 ?? "").utf8)
        append(body.bytes.count, 4)
        out.append(contentsOf: body.bytes)
        if hasText, let text = body.text {
            append(text.utf8.count, 4)
            out.append(contentsOf: text.utf8)
        }
        return out
    }

    /// The parts of a section; nil when it is damaged.
    static func parts(_ section: UnsafeRawBufferPointer)
        -> (size: Int, sha256: Range<Int>?, bytes: Range<Int>, text: Range<Int>?, bytesAreText: Bool)? {
        var at = 0
        func take(_ width: Int) -> Int? {
            guard at + width <= section.count else { return nil }
            defer { at += width }
            return Int(truncatingIfNeeded: LittleEndian.read(section, at: at, width: width))
        }
        func range(_ length: Int) -> Range<Int>? {
            guard length >= 0, at + length <= section.count else { return nil }
            defer { at += length }
            return at..<at + length
        }
        guard let flags = take(1), let size = take(8), let shaLength = take(1), let sha = range(shaLength),
              let byteCount = take(4), let bytes = range(byteCount) else { return nil }
        var text: Range<Int>?
        if flags & 2 != 0 {
            guard let textCount = take(4), let found = range(textCount) else { return nil }
            text = found
        }
        return (size, shaLength == 0 ? nil : sha, bytes, text, flags & 1 != 0)
    }

    /// The body a section holds, and whether its bytes are its text (as the writer found, so
    /// readers need not compare them again); nil when it is damaged.
    static func decode(_ section: UnsafeRawBufferPointer) -> (body: StoredBody, bytesAreText: Bool)? {
        guard let parts = parts(section) else { return nil }
        let bytes = Array(section[parts.bytes])
        let text = parts.bytesAreText ? String(decoding: bytes, as: UTF8.self)
            : parts.text.map { String(decoding: section[$0], as: UTF8.self) }
        let sha256 = parts.sha256.map { String(decoding: section[$0], as: UTF8.self) }
        return (StoredBody(bytes: bytes, size: parts.size, sha256: sha256, text: text), parts.bytesAreText)
    }
}

/// The writer's frame being gathered: texts appended as flows come, taken whole when full or
/// when the batch ends. Its id is chosen when its first text comes, so that the flows' rows can
/// name it before it is written.
struct FrameBuilder {
    /// The frame's text so far.
    private(set) var text: [UInt8] = []
    /// The frame's id, once it has a text.
    private(set) var id: Int64?
    /// The host of its first record, whose dictionary it is compressed against, and that
    /// record's place (a new dictionary is made of it, not of the whole frame).
    private(set) var host = ""
    private(set) var sample: Range<Int> = 0..<0
    /// How many flows' texts it holds.
    private(set) var count = 0

    /// Whether a record this long goes in a frame: larger ones (bodies in the JSON) are kept
    /// alone, as before frames, so that reading one never decodes another's megabytes.
    static func takes(recordOfLength length: Int) -> Bool { length <= RecordCoding.largestDictionary }

    /// Whether the frame should be written now.
    var isFull: Bool { text.count >= RecordCoding.frameTarget }

    /// Appends a flow's texts; the reference to them. `newID` gives a frame id when this is
    /// the frame's first text.
    mutating func append(record: UnsafeRawBufferPointer, request: String?, response: String?,
                         requestBody: [UInt8]? = nil, responseBody: [UInt8]? = nil, host: String,
                         newID: () throws -> Int64) rethrows -> RecordReference {
        if id == nil {
            id = try newID()
            self.host = host
            sample = 0..<record.count
            text.reserveCapacity(RecordCoding.frameTarget + RecordCoding.largestDictionary)
        }
        let offset = text.count
        count += 1
        text.append(contentsOf: record)
        let requestLength = request.map { append($0.utf8) }
        let responseLength = response.map { append($0.utf8) }
        let requestBodyLength = requestBody.map { append($0) }
        let responseBodyLength = responseBody.map { append($0) }
        return RecordReference(frame: id!, offset: offset,
                               lengths: [record.count, requestLength, responseLength, requestBodyLength, responseBodyLength])
    }

    /// Appends `bytes` to the frame's text; how many there were.
    private mutating func append(_ bytes: some Collection<UInt8>) -> Int {
        let before = text.count
        text.append(contentsOf: bytes)
        return text.count - before
    }

    /// The frame gathered so far (nil when empty), leaving the builder empty.
    mutating func take() -> (id: Int64, text: [UInt8], host: String, sample: Range<Int>, count: Int)? {
        guard let id else { return nil }
        defer { reset() }
        return (id, text, host, sample, count)
    }

    /// Drops what was gathered (a rolled-back batch, `clear`).
    mutating func reset() {
        text.removeAll(keepingCapacity: text.capacity <= RecordCoding.bufferKept)
        id = nil
        count = 0
        host = ""
        sample = 0..<0
    }
}

/// The little-endian integers of the store's own formats: a compressed value's dictionary id
/// (`RecordCoding`), a frame reference, a framed body's lengths.
enum LittleEndian {
    /// The `width` bytes of `bytes` from `offset`, least significant first (the caller checks
    /// that they are there).
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in (offset..<offset + width).reversed() { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    /// Appends the `width` low bytes of `value`, least significant first.
    static func append(_ value: UInt64, width: Int, to out: inout [UInt8]) {
        for index in 0..<width { out.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
