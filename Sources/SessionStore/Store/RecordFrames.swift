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

/// Where a flow's texts are: frame `frame`, from `offset`, the record and then its request's and
/// response's header texts (`FlowRecord.headerText`), each present or not.
///
/// Stored as a 25-byte BLOB: `tag`, the frame's id (8 bytes), the offset and the three lengths
/// (4 bytes each, `absent` for a missing head), all little-endian.
struct RecordReference: Equatable {
    enum Part { case record, request, response }

    static let tag: UInt8 = 2
    static let size = 25
    static let absent = UInt32.max

    var frame: Int64
    var offset: Int
    var record: Int
    var request: Int?
    var response: Int?

    init(frame: Int64, offset: Int, record: Int, request: Int?, response: Int?) {
        (self.frame, self.offset, self.record, self.request, self.response) = (frame, offset, record, request, response)
    }

    /// The reference `bytes` hold; nil when they are anything else (a record kept whole, text).
    init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count == Self.size, bytes[0] == Self.tag else { return nil }
        func word(_ at: Int, _ width: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in (at..<at + width).reversed() { value = value << 8 | UInt64(bytes[index]) }
            return value
        }
        func length(_ at: Int) -> Int? {
            let value = UInt32(word(at, 4))
            return value == Self.absent ? nil : Int(value)
        }
        frame = Int64(bitPattern: word(1, 8))
        offset = Int(word(9, 4))
        record = Int(word(13, 4))
        request = length(17)
        response = length(21)
    }

    var bytes: [UInt8] {
        var out: [UInt8] = [Self.tag]
        out.reserveCapacity(Self.size)
        func append(_ value: UInt64, _ width: Int) {
            for index in 0..<width { out.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
        }
        append(UInt64(bitPattern: frame), 8)
        append(UInt64(offset), 4)
        append(UInt64(record), 4)
        append(request.map { UInt64($0) } ?? UInt64(Self.absent), 4)
        append(response.map { UInt64($0) } ?? UInt64(Self.absent), 4)
        return out
    }

    /// Where `part` lies in the frame's text; nil for a head the flow does not have.
    func range(of part: Part) -> Range<Int>? {
        switch part {
        case .record:
            return offset..<offset + record
        case .request:
            return request.map { offset + record..<offset + record + $0 }
        case .response:
            guard let response else { return nil }
            let start = offset + record + (request ?? 0)
            return start..<start + response
        }
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
    mutating func append(record: UnsafeRawBufferPointer, request: String?, response: String?, host: String,
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
        let requestLength = request.map { append($0) }
        let responseLength = response.map { append($0) }
        return RecordReference(frame: id!, offset: offset, record: record.count, request: requestLength,
                               response: responseLength)
    }

    private mutating func append(_ string: String) -> Int {
        let before = text.count
        text.append(contentsOf: string.utf8)
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
