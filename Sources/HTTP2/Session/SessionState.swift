import CNGHTTP2

/// The Swift side of one `nghttp2_session`: what its callbacks collect and what its data
/// providers serve. Reached from C through the session's `user_data`; owned by `HTTP2Session`,
/// which frees the `nghttp2_session` first, so the state outlives every callback.
final class SessionState {
    /// A header block being received, between `on_begin_headers` and `on_frame_recv`.
    ///
    /// A class, changed where it is: a struct copied out of `incoming` shared its field arrays
    /// with the dictionary's copy, so each append copied the whole list, and changing it inside
    /// the dictionary allocated an accessor frame per field. Its pseudo-header and regular fields
    /// are kept apart as `HTTP2HeaderBlock` holds them.
    final class IncomingBlock {
        var pseudo: [HTTP2Field] = []
        var fields: [HTTP2Field] = []
        /// Name + value + 32 per field so far (RFC 9113 §6.5.2).
        var size = 0
        /// Whether `size` passed `maxHeaderListSize`: fields are no longer kept.
        var tooLarge = false

        /// Keeps `field` (in its list, in wire order), `size` being the list's size with it.
        func append(_ field: consuming HTTP2Field, size: Int) {
            self.size = size
            if field.isPseudo {
                if pseudo.capacity == 0 { pseudo.reserveCapacity(4) }
                pseudo.append(field)
            } else {
                if fields.capacity == 0 { fields.reserveCapacity(12) }
                fields.append(field)
            }
        }

        /// The list passed `maxHeaderListSize` at `size`: nothing more is kept.
        func drop(size: Int) {
            self.size = size
            tooLarge = true
            pseudo = []
            fields = []
        }

        /// The block as received: its pseudo-header fields passed libnghttp2's checks (one that
        /// failed them reset the stream before the block was finished).
        var head: HTTP2HeaderBlock {
            var head = HTTP2HeaderBlock(pseudo: pseudo, fields: fields)
            head.pseudoChecked = true
            return head
        }
    }

    let isServer: Bool
    let maxHeaderListSize: Int
    /// `HTTP2Limits.enablePush`: whether a PUSH_PROMISE may be accepted at all.
    let pushEnabled: Bool
    /// Events not yet handed to the caller, oldest first.
    var events: [HTTP2Event] = []
    /// The header block being received and its stream. Header blocks do not interleave (RFC 9113
    /// §4.3: a HEADERS frame's CONTINUATION frames follow it with no other frame between them), so
    /// this is one slot, not a dictionary searched again for every field received.
    var incoming: (stream: Int32, block: IncomingBlock)?
    var outbound: [Int32: OutboundStream] = [:]
    /// Streams whose oversized head was answered: their later DATA and trailers are dropped
    /// (the DATA consumed at once, so the connection window is not lost).
    var rejected: Set<Int32> = []
    /// Streams this side has reset and that have not closed yet: a second RST_STREAM for one
    /// whose HEADERS were still queued goes out as a real frame for a stream the peer never saw,
    /// which RFC 9113 §6.4 makes a connection error (nghttpd answered GOAWAY PROTOCOL_ERROR and
    /// every other stream of the connection was lost).
    var resetSubmitted: Set<Int32> = []

    /// Whether `stream`'s oversized head was answered. Nearly always none is, and an empty set is
    /// not hashed into for every DATA chunk and closed stream.
    func isRejected(_ stream: Int32) -> Bool { !rejected.isEmpty && rejected.contains(stream) }
    /// The library's last error text, for a thrown error's reason.
    var lastErrorText: String?
    /// Whether the connection's end was already reported (by the caller's own `goAway`, or by a
    /// thrown failure), so a GOAWAY sent afterwards raises no second `.protocolError`.
    var goAwayExplained = false

    /// The bytes of HPACK's static table entries met so far (nearly every field name, and values
    /// such as `GET`, `https`, `200`), by the library's buffer for each: those buffers are static,
    /// so a name met on every stream is copied out once per connection, not once per field.
    private var staticBytes = StaticBytesCache()

    /// The bytes of a received name or value (`buffer` is `rcbuf`'s).
    func bytes(of rcbuf: OpaquePointer, _ buffer: nghttp2_vec) -> [UInt8] {
        let copy = { Array(UnsafeBufferPointer(start: buffer.base, count: buffer.len)) }
        guard nghttp2_rcbuf_is_static(rcbuf) != 0 else { return copy() }
        return staticBytes.bytes(for: rcbuf, otherwise: copy)
    }

    init(isServer: Bool, limits: HTTP2Limits) {
        self.isServer = isServer
        self.maxHeaderListSize = limits.maxHeaderListSize
        self.pushEnabled = limits.enablePush
        self.streamResetBurst = limits.streamResetBurst
    }

    /// RST_STREAM frames the peer sent, and the burst the library's reset-rate limit allows (server
    /// role): a GOAWAY INTERNAL_ERROR the library sends past that many is the limit's (rapid reset,
    /// CVE-2023-44487), and the reason says so instead of the bare code.
    var resetsReceived: UInt64 = 0
    let streamResetBurst: UInt64

    /// Queues an event, merging body chunks and sent counts of the same stream with the one
    /// just before, so a large frame read in pieces is one event.
    func append(_ event: consuming HTTP2Event) {
        switch (events.last, event) {
        case let (.data(s1, previous, false)?, .data(s2, more, end)) where s1 == s2:
            events[events.count - 1] = .data(stream: s1, bytes: previous + more, endStream: end)
        case let (.dataSent(s1, n1)?, .dataSent(s2, n2)) where s1 == s2:
            events[events.count - 1] = .dataSent(stream: s1, count: n1 + n2)
        default:
            events.append(event)
        }
    }

    /// Hands out every queued event and forgets them.
    func take() -> [HTTP2Event] {
        defer { events = [] }
        return events
    }

    /// Turns a complete header block into the event its role and content say it is.
    func finishBlock(_ block: IncomingBlock, stream: Int32, isRequest: Bool, endStream: Bool) {
        let head = block.head
        if isServer {
            append(isRequest ? .requestHead(stream: stream, head, endStream: endStream)
                             : .trailers(stream: stream, head.fields))
        } else if let status = head.status {
            append((100..<200).contains(status) ? .informationalHead(stream: stream, head)
                                                 : .responseHead(stream: stream, head, endStream: endStream))
        } else {
            append(.trailers(stream: stream, head.fields))
        }
    }

    /// Forgets a closed stream, reporting body bytes that will never be sent. `notSent`: the
    /// library dropped the stream's request HEADERS, so the whole request is handed back
    /// (`requestNotSent`) instead of its bytes being discarded.
    func close(stream: Int32, code: UInt32, notSent: Bool = false) {
        if incoming?.stream == stream { incoming = nil }
        if !rejected.isEmpty { rejected.remove(stream) }
        if !resetSubmitted.isEmpty { resetSubmitted.remove(stream) }
        if notSent {
            let out = outbound.removeValue(forKey: stream)
            // No outbound body: the request went with END_STREAM on its head.
            append(.requestNotSent(stream: stream, body: out.map { $0.queue.takeAll() } ?? [],
                                   endStream: out?.ended ?? true, trailers: out?.trailers))
        } else if let out = outbound.removeValue(forKey: stream) {
            let dropped = out.queue.removeAll()
            if dropped > 0 { append(.dataDiscarded(stream: stream, count: dropped)) }
        }
        append(.streamClosed(stream: stream, code: HTTP2ErrorCode(rawValue: code)))
    }
}
