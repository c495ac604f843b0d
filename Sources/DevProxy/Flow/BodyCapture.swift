import CertAuthority
import Foundation
import SessionStore

/// Captures one HTTP body as it streams through: keeps the first `limit` bytes, counts them
/// all, and hashes them all (SHA-256), then turns that into the logged `Flow.Body`.
///
/// With a `BodySpool` (the session store's), it keeps up to the larger of `limit` and the store's
/// limit, but only the first `BodySpool.headBytes` in memory: a body that goes past them continues
/// in a spool file, from which `finish` reads the flow log's part back and which the finished
/// `Flow.Body` hands to the store (`spooled`). So what a running exchange holds in memory does not
/// grow with `--body-limit` or `--store-body-limit`, and small bodies never touch the disk.
///
/// One per body, used by the one thread relaying it; not thread-safe (the background hash of a
/// large body is its own business).
public final class BodyCapture {
    /// The default `--body-limit`: 1 MiB kept per body.
    public static let defaultLimit = 1024 * 1024

    /// How many leading bytes are kept.
    public let limit: Int
    /// Bytes seen so far.
    public private(set) var size = 0
    /// The bytes kept in memory: the whole kept prefix without a spool file, nothing once spooling.
    private var kept: [UInt8] = []
    private let spool: BodySpool?
    /// Bytes kept in all: `limit`, or with a spool the larger of it and the store's limit.
    private let keepLimit: Int
    /// Bytes kept in memory before spooling; `limit` once a spool file could not be used.
    private var memoryLimit: Int
    private var file: SpoolFile?
    /// False once a spool file could not be made or written: the rest of the body stays in memory.
    private var canSpool = true
    private var spooled: SpooledBody?
    // Created on the first byte: most requests have no body, and their hash is a constant.
    private var hash: RunningSHA256?
    // Takes over from `hash` once the body is past `inlineHashBytes`.
    private var digester: BackgroundDigest?
    /// Set once `digester` writes the spool file (from this body offset on): past the flow log's
    /// part, a large body's disk writes run beside the relay, not in its path.
    private var spoolHandedOver = false
    private var digest: String?

    /// - Parameters:
    ///   - limit: bytes to keep for the flow log (the `--body-limit`); 0 keeps only size and hash.
    ///   - spool: where bytes past the in-memory head go, up to the store's limit; nil keeps
    ///     `limit` bytes in memory.
    public init(limit: Int = BodyCapture.defaultLimit, spool: BodySpool? = nil) {
        precondition(limit >= 0, "a body limit cannot be negative")
        self.limit = limit
        self.spool = spool
        canSpool = spool != nil
        keepLimit = spool.map { max(limit, $0.storeLimit) } ?? limit
        memoryLimit = spool == nil ? limit : min(keepLimit, BodySpool.headBytes)
    }

    /// The whole body when all of it is held in memory and it is at most `maximum` bytes long
    /// (a request an origin refused can then go again); nil otherwise.
    func heldWhole(upTo maximum: Int) -> [UInt8]? {
        file == nil && kept.count == size && size <= maximum ? kept : nil
    }

    /// Adds the next bytes of the body.
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if digester != nil {
            append(ArraySlice(bytes.assumingMemoryBound(to: UInt8.self)))
            return
        }
        count(bytes)
        if hash == nil { hash = RunningSHA256() }
        hash?.update(bytes)
    }

    /// Adds the next bytes of the body.
    public func append(_ bytes: [UInt8]) {
        append(bytes[...])
    }

    /// Adds the next bytes of the body. Past the first `inlineHashBytes`, the bytes are hashed on
    /// another thread: the array is kept (not copied) until then.
    public func append(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        if digester == nil, size + bytes.count > Self.inlineHashBytes {
            digester = BackgroundDigest(continuing: hash ?? RunningSHA256(), offset: size)
            hash = nil
        }
        guard let digester else {
            bytes.withUnsafeBytes { append($0) }
            return
        }
        if !spoolHandedOver, let file, size >= limit {
            // The flow log's part is in the file already (written here, so a failed write could
            // still fall back to memory); the rest is the store's, written by the digest's queue.
            spoolHandedOver = true
            digester.spool(to: file, from: size, until: keepLimit, required: limit)
        }
        bytes.withUnsafeBytes { count($0) }
        digester.add(bytes)
    }

    /// Sizes and keeps the prefix of the next bytes (not the hash).
    private func count(_ bytes: UnsafeRawBufferPointer) {
        precondition(digest == nil, "BodyCapture.append after finish")
        let offset = size
        size += bytes.count
        guard offset < keepLimit else { return }
        if let file {
            if !spoolHandedOver { write(UnsafeRawBufferPointer(rebasing: bytes.prefix(keepLimit - offset)), to: file) }
            return
        }
        let room = memoryLimit - kept.count
        if room > 0 {
            let prefix = UnsafeRawBufferPointer(rebasing: bytes.prefix(room))
            kept.append(contentsOf: prefix.assumingMemoryBound(to: UInt8.self))
        }
        guard bytes.count > room, kept.count < keepLimit else { return }
        // Past the head: the rest goes to a file (made now, so a small body costs none).
        let rest = UnsafeRawBufferPointer(rebasing: bytes[max(room, 0)...].prefix(keepLimit - kept.count))
        guard canSpool, let made = spool?.makeFile() else {
            keepInMemory(rest)
            return
        }
        file = made
        let head = kept
        kept = []
        head.withUnsafeBytes { write($0, to: made) }
        if file == nil {
            kept = head
            keepInMemory(rest)
        } else {
            write(rest, to: made)
        }
    }

    /// Writes `bytes` to the spool file; when that fails, goes back to memory (up to `limit`).
    private func write(_ bytes: UnsafeRawBufferPointer, to file: SpoolFile) {
        guard !bytes.isEmpty, self.file != nil else { return }
        if !file.append(bytes, required: limit) {
            // A full disk: what the flow log needs comes back into memory; the file goes.
            kept = file.read(count: min(limit, file.length)) ?? []
            self.file = nil
            keepInMemory(UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// Without a usable spool file: keeps bytes in memory up to `limit`, as without a spool.
    private func keepInMemory(_ bytes: UnsafeRawBufferPointer) {
        canSpool = false
        memoryLimit = max(limit, kept.count)
        let room = memoryLimit - kept.count
        guard room > 0, !bytes.isEmpty else { return }
        let prefix = UnsafeRawBufferPointer(rebasing: bytes.prefix(room))
        kept.append(contentsOf: prefix.assumingMemoryBound(to: UInt8.self))
    }

    /// Bodies up to this size are hashed on the relaying thread: handing them over would cost
    /// more than the hash. A larger body (a download) is hashed beside the relay instead of in its
    /// path: SHA-256 is a third of the relaying thread's CPU on a large body (1.5 GB/s with SHA-NI).
    static let inlineHashBytes = 256 * 1024

    /// The most of a spooled textual body a running flow's record shows (`preview`): what the
    /// web UI lists a live event stream's events from, read back once a second at most.
    static let spooledPreviewBytes = 1024 * 1024

    /// The body as the flow log records it, after the last `append` (calling it again gives the
    /// same body).
    ///
    /// The kept prefix becomes `text` when it is UTF-8 text, after undoing `contentEncoding`
    /// (gzip, deflate, br, zstd; `decoded` names it) when that yields text; otherwise `base64` of
    /// the raw prefix. A truncated prefix decodes as far as it goes.
    /// - Parameters:
    ///   - contentEncoding: the message's `Content-Encoding` header value.
    ///   - contentType: the message's `Content-Type` header value.
    public func finish(contentEncoding: String?, contentType: String?) -> Flow.Body {
        // The digest first: its queue may still be writing the spool file that `loggedPrefix` closes.
        let sha256 = digest ?? digester?.finishHex() ?? hash?.finishHex() ?? RunningSHA256.emptyHex
        let kept = loggedPrefix()
        let truncated = size > kept.count
        digest = sha256
        hash = nil
        digester = nil
        var body = Flow.Body(size: size, sha256: sha256, text: nil, base64: nil, truncated: truncated, decoded: nil)
        body.spooled = spooled
        Self.show(kept, in: &body, contentEncoding: contentEncoding, contentType: contentType, running: false)
        return body
    }

    /// Puts `shown`, a body's first bytes, into `body` as the flow log shows them: text when they
    /// are UTF-8 text, after undoing `contentEncoding` when that yields text (`decoded` names it),
    /// else base64. `running`: more of the body is still to come, so a decoded text is a prefix
    /// even where the coding's stream seemed to end.
    private static func show(_ shown: [UInt8], in body: inout Flow.Body, contentEncoding: String?, contentType: String?,
                             running: Bool) {
        // A running flow's preview (made on the relaying thread, once a second) decodes no more
        // than it shows of a spooled body: a 1 MB gzip of NULs decoded 4 MiB every time, and
        // the relay crawled.
        let decoded = ContentDecoder.decode(shown, contentEncoding: contentEncoding,
                                            outputLimit: running ? spooledPreviewBytes : ContentDecoder.defaultOutputLimit)
        if decoded == nil, !shown.isEmpty { body.decodeError = decodeError(contentEncoding) }
        var reading: BodyText.Reading?
        if let decoded {
            reading = BodyText.reading(decoded.bytes, isPrefix: running || decoded.end != .complete,
                                       contentType: contentType)
            if let text = reading?.text {
                body.text = text
                body.decoded = ContentCoding.list(fromHeader: contentEncoding)?.map(\.rawValue).joined(separator: ", ")
                if !running, decoded.end == .outputLimit {
                    // Said, not silently cut: the whole decodes to more than the record keeps.
                    body.truncated = true
                    body.decodedCut = decoded.bytes.count
                }
                if !running, !body.truncated, decoded.end == .inputEnded || decoded.end == .corrupt, let names = body.decoded {
                    // The whole body was kept and its coding did not end well: an origin cut off
                    // mid-compression, or damaged bytes. Said, where the partial text read as the
                    // whole response ("the server returns half a list").
                    body.decodeError = decoded.end == .inputEnded
                        ? "the \(names) stream stops before its end (the body was cut short): the text is what "
                            + "decoded of it, \(decoded.bytes.count) bytes"
                        : "the \(names) stream is damaged: the text is what decoded before the damage, "
                            + "\(decoded.bytes.count) bytes"
                }
                body.charset = reading?.charset
                if !running, body.decoded?.isEmpty == false || body.charset != nil,
                   text.utf8.count != shown.count || !text.utf8.elementsEqual(shown) {
                    body.wireBytes = shown
                }
            }
        }
        if body.text == nil {
            reading = BodyText.reading(shown, isPrefix: body.truncated, contentType: contentType)
            if let text = reading?.text {
                body.text = text
                body.charset = reading?.charset
                if !running, body.charset != nil { body.wireBytes = shown }
            } else {
                body.base64 = shown.base64
                body.base64Bytes = shown
            }
        }
        if body.decodeError == nil { body.decodeError = reading?.charsetError }
    }

    /// Why bytes labelled `contentEncoding` could not be decoded (`ContentDecoder.decode` gave
    /// nothing): nil when the label names no coding (none, or `identity`).
    static func decodeError(_ contentEncoding: String?) -> String? {
        guard let contentEncoding else { return nil }
        guard let codings = ContentCoding.list(fromHeader: contentEncoding) else {
            let unknown = ContentCoding.unknownNames(inHeader: contentEncoding)
            return "unknown content coding \(unknown.joined(separator: ", ")): kept as sent"
        }
        guard !codings.isEmpty else { return nil }
        let names = codings.map(\.rawValue).joined(separator: ", ")
        return "could not be decoded as \(names): kept as sent"
    }

    /// The body so far, for a flow still running (`ExchangeRecorder.snapshot`): its size until
    /// now and its first bytes as `finish` would show them (text, decoded when `contentEncoding`
    /// says so, else base64): from memory, or, for a textual body spooled past its in-memory head
    /// (an event stream past 64 KiB: an LLM's tokens, a feed), up to `spooledPreviewBytes` read
    /// back from the spool file while this thread still writes it (before the digest's queue takes
    /// it over, at `limit`). `sha256` is empty, the hash being of the whole. Leaves the capture as
    /// it was.
    public func preview(contentEncoding: String?, contentType: String?) -> Flow.Body? {
        guard size > 0 else { return nil }
        var shown: [UInt8] = []
        if digest == nil {
            if let file {
                if !spoolHandedOver, BodyText.isTextual(contentType: contentType) {
                    shown = file.read(count: min(size, limit, Self.spooledPreviewBytes)) ?? []
                }
            } else {
                shown = Array(kept.prefix(limit))
            }
        }
        var body = Flow.Body(size: size, sha256: "", text: nil, base64: nil, truncated: size > shown.count, decoded: nil)
        if !shown.isEmpty {
            Self.show(shown, in: &body, contentEncoding: contentEncoding, contentType: contentType, running: true)
        }
        return body
    }

    /// The flow log's part of the body (its first `limit` bytes); on the first call, also settles
    /// what goes to the store: the spool file, or the in-memory head when it holds more than that.
    private func loggedPrefix() -> [UInt8] {
        if let file {
            file.finishWriting()
            if spooled == nil { spooled = SpooledBody(file: file) }
            return spooled?.prefix(limit) ?? []
        }
        if kept.count > limit {
            if spooled == nil { spooled = SpooledBody(head: kept) }
            return Array(kept.prefix(limit))
        }
        return kept
    }
}

extension Flow.Body {
    /// A body of no bytes.
    public static let empty = Flow.Body(size: 0, sha256: RunningSHA256.emptyHex, text: "", base64: nil,
                                        truncated: false, decoded: nil)
}

extension Flow {
    /// The flow without its bodies' spool references, for a sink that keeps flows: a spool file is
    /// removed only when nothing refers to it, and its bytes count against the spool's budget.
    public func releasingSpool() -> Flow {
        guard request?.body?.spooled != nil || response?.body?.spooled != nil else { return self }
        var flow = self
        flow.request?.body?.spooled = nil
        flow.response?.body?.spooled = nil
        return flow
    }
}
