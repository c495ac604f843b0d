import CertAuthority
import Foundation

/// Captures one HTTP body as it streams through: keeps the first `limit` bytes, counts them
/// all, and hashes them all (SHA-256), then turns that into the logged `Flow.Body`.
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
    private var kept: [UInt8] = []
    // Created on the first byte: most requests have no body, and their hash is a constant.
    private var hash: RunningSHA256?
    // Takes over from `hash` once the body is past `inlineHashBytes`.
    private var digester: BackgroundDigest?
    private var digest: String?

    /// - Parameter limit: bytes to keep (the `--body-limit`); 0 keeps only size and hash.
    public init(limit: Int = BodyCapture.defaultLimit) {
        precondition(limit >= 0, "a body limit cannot be negative")
        self.limit = limit
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
            digester = BackgroundDigest(continuing: hash ?? RunningSHA256())
            hash = nil
        }
        guard let digester else {
            bytes.withUnsafeBytes { append($0) }
            return
        }
        bytes.withUnsafeBytes { count($0) }
        digester.add(bytes)
    }

    /// Sizes and keeps the prefix of the next bytes (not the hash).
    private func count(_ bytes: UnsafeRawBufferPointer) {
        precondition(digest == nil, "BodyCapture.append after finish")
        size += bytes.count
        let room = limit - kept.count
        if room > 0 {
            let prefix = UnsafeRawBufferPointer(rebasing: bytes.prefix(room))
            kept.append(contentsOf: prefix.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Bodies up to this size are hashed on the relaying thread: handing them over would cost
    /// more than the hash. A larger body (a download) is hashed beside the relay instead of in its
    /// path: SHA-256 is a third of the relaying thread's CPU on a large body (1.5 GB/s with SHA-NI).
    static let inlineHashBytes = 256 * 1024

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
        let truncated = size > kept.count
        let sha256 = digest ?? digester?.finishHex() ?? hash?.finishHex() ?? RunningSHA256.emptyHex
        digest = sha256
        hash = nil
        digester = nil
        var body = Flow.Body(size: size, sha256: sha256, text: nil, base64: nil, truncated: truncated, decoded: nil)
        if let decoded = ContentDecoder.decode(kept, contentEncoding: contentEncoding),
           let text = BodyText.text(decoded.bytes, isPrefix: decoded.end != .complete, contentType: contentType) {
            body.text = text
            body.decoded = ContentCoding.list(fromHeader: contentEncoding)?.map(\.rawValue).joined(separator: ", ")
        } else if let text = BodyText.text(kept, isPrefix: truncated, contentType: contentType) {
            body.text = text
        } else {
            body.base64 = kept.base64
        }
        return body
    }
}

extension Flow.Body {
    /// A body of no bytes.
    public static let empty = Flow.Body(size: 0, sha256: RunningSHA256.emptyHex, text: "", base64: nil,
                                        truncated: false, decoded: nil)
}
