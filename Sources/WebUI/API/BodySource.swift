import DevProxy
import Foundation
import SessionStore

/// What a body route serves from the store, read a piece at a time so that no answer holds a body
/// whole: the stored bytes, the text stored beside them, or the bytes decoded from their content
/// coding (at most `decodedLimit` decoded bytes).
struct BodySource: Sendable {
    enum Content: Sendable, Equatable {
        /// The bytes as stored (as sent, after de-chunking).
        case bytes
        /// The decoded text stored beside the bytes (the flow log's `body.text`).
        case text
        /// The bytes decoded from the codings of this `Content-Encoding` value.
        case decoded(String)
    }

    let store: SessionStore
    let id: String
    let part: StoredBody.Part
    let content: Content
    /// The most decoded bytes served (`.decoded`): the session's body limit.
    let decodedLimit: Int

    /// Thrown by a reader that has had enough, to stop the store's read.
    private struct Enough: Error {}

    /// Calls `body` with the source's first `limit` bytes (or all), in order, in pieces.
    /// - Returns: for `.decoded`, why decoding stopped (`.outputLimit`: there is more than `limit`
    ///   or `decodedLimit`); nil for the others.
    /// - Throws: `SessionStoreError`, or what `body` throws.
    @discardableResult
    func read(upTo limit: Int = .max, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> ContentDecoder.End? {
        var remaining = limit
        var failure: Error?
        guard case .decoded(let coding) = content else {
            do {
                try store.streamBody(id: id, part: part, text: content == .text) { piece in
                    let count = min(remaining, piece.count)
                    if count > 0 { try body(UnsafeRawBufferPointer(start: piece.baseAddress, count: count)) }
                    remaining -= count
                    if remaining == 0 { throw Enough() }
                }
            } catch is Enough {}
            return nil
        }
        guard let decoder = ContentDecodingStream(contentEncoding: coding, outputLimit: min(limit, decodedLimit)) else {
            return .corrupt
        }
        do {
            try store.streamBody(id: id, part: part) { piece in
                decoder.write(piece) { decoded in
                    guard failure == nil else { return }
                    do { try body(decoded) } catch { failure = error }
                }
                if let failure { throw failure }
                if decoder.end != nil { throw Enough() }
            }
        } catch is Enough {}
        if let failure { throw failure }
        return decoder.finish()
    }

    /// Reads the source as far as `window` bytes (or whole) without keeping it: how much there is
    /// and whether it is text (`BodyScan`).
    func scan(window: Int = .max, cutAt cut: Int? = nil) throws -> BodyScan {
        var scan = BodyScan(cut: cut)
        let end = try read(upTo: window) { scan.take($0) }
        scan.end = end
        return scan
    }
}

/// What a pass over a body found: its length so far, whether it is UTF-8 text without NUL, and
/// where a cut at `cut` bytes falls on a character boundary.
struct BodyScan {
    /// Bytes seen.
    private(set) var count = 0
    /// No invalid UTF-8 so far (an incomplete character may still be pending in `carry`).
    private(set) var isValidUTF8 = true
    private(set) var hasNUL = false
    /// The decoder's end, for a decoded source.
    var end: ContentDecoder.End?
    /// Where a text answer limited to `cut` bytes ends: the start of the character at `cut` (the
    /// largest count ≤ `cut` that ends on a character boundary); nil while none is seen.
    private(set) var boundary: Int?
    private let cut: Int?
    /// The bytes of a character split between two pieces.
    private var carry: [UInt8] = []

    init(cut: Int?) {
        self.cut = cut
    }

    /// True when everything seen is UTF-8 text without NUL; an unfinished last character counts
    /// as text when the pass stopped before the body's end (`complete` false).
    func isText(complete: Bool) -> Bool {
        isValidUTF8 && !hasNUL && (carry.isEmpty || !complete)
    }

    mutating func take(_ piece: UnsafeRawBufferPointer) {
        guard !piece.isEmpty else { return }
        let start = count
        count += piece.count
        if let cut, start <= cut {
            var index = min(cut, count - 1)
            while index >= start {
                if piece[index - start] & 0xC0 != 0x80 {
                    boundary = index
                    break
                }
                index -= 1
            }
        }
        if let base = piece.baseAddress, memchr(base, 0, piece.count) != nil { hasNUL = true }
        guard isValidUTF8 else { return }
        if carry.isEmpty {
            validate(piece)
        } else {
            let joined = carry + piece
            carry = []
            joined.withUnsafeBytes { validate($0) }
        }
    }

    /// Validates `bytes` but a split character at the end, which waits in `carry`.
    private mutating func validate(_ bytes: UnsafeRawBufferPointer) {
        let split = Self.splitTail(bytes)
        let whole = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - split)])
        if String(validating: whole, as: UTF8.self) == nil { isValidUTF8 = false }
        carry = Array(bytes[(bytes.count - split)...])
    }

    /// How many bytes at the end of `bytes` begin a character that continues past them (0…3).
    private static func splitTail(_ bytes: UnsafeRawBufferPointer) -> Int {
        for back in 1...min(3, bytes.count) {
            let byte = bytes[bytes.count - back]
            if byte & 0xC0 == 0x80 { continue }
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return length > back ? back : 0
        }
        return 0
    }
}
