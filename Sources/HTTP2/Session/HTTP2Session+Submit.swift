import CNGHTTP2

extension HTTP2Session {
    // MARK: heads

    /// Client role: opens a stream with a request head.
    /// - Parameter endStream: true for a request without a body; otherwise send the body with
    ///   `submitData` and end it with `endStream` or `submitTrailers`.
    /// - Returns: the new stream's id.
    /// - Throws: `HTTP2Error`: `.invalidField`, or `.submitRefused` (server role, GOAWAY
    ///   received, stream ids exhausted).
    ///
    /// A request submitted before a GOAWAY arrives, but not yet sent, is never sent: it is reported
    /// as `.streamClosed(stream, .refusedStream)`, like the streams the GOAWAY itself refuses.
    @discardableResult
    public func submitRequest(_ head: HTTP2HeaderBlock, endStream: Bool) throws(HTTP2Error) -> Int32 {
        guard role == .client else { throw HTTP2Error(.submitRefused, "a server session cannot send requests") }
        // The library would accept the request and drop it at send time after a GOAWAY.
        guard nghttp2_session_check_request_allowed(handle) != 0 else {
            throw HTTP2Error(.submitRefused, "no new stream allowed (GOAWAY sent or received, or stream ids spent)")
        }
        let block = try head.checkedBlockForSending()
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: SessionCallbacks.readData)
        let stream = withNameValueList(block.pseudo, block.fields) { list, count in
            endStream ? nghttp2_submit_request(handle, nil, list, count, nil, nil)
                      : nghttp2_submit_request(handle, nil, list, count, &provider, nil)
        }
        try check(stream, "request")
        if !endStream { state.outbound[stream] = OutboundStream() }
        return stream
    }

    /// Server role: sends a response head on a request's stream. A 1xx head is sent as an
    /// informational response (no END_STREAM, the final head still to come).
    /// - Parameter endStream: true for a response without a body or trailers.
    /// - Throws: `HTTP2Error`: `.invalidField`, `.invalidState` (1xx with `endStream`), or
    ///   `.submitRefused` (client role, stream closed or unknown).
    public func submitResponse(stream: Int32, _ head: HTTP2HeaderBlock, endStream: Bool) throws(HTTP2Error) {
        guard role == .server else { throw HTTP2Error(.submitRefused, "a client session cannot send responses") }
        let block = try head.checkedBlockForSending()
        if let status = head.status, (100..<200).contains(status) {
            guard !endStream else { throw HTTP2Error(.invalidState, "an informational response cannot end the stream") }
            let rv = withNameValueList(block.pseudo, block.fields) { list, count in
                nghttp2_submit_headers(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, nil, list, count, nil)
            }
            return try check(rv, "informational response on stream \(stream)")
        }
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: SessionCallbacks.readData)
        let rv = withNameValueList(block.pseudo, block.fields) { list, count in
            endStream ? nghttp2_submit_response(handle, stream, list, count, nil)
                      : nghttp2_submit_response(handle, stream, list, count, &provider)
        }
        try check(rv, "response on stream \(stream)")
        if !endStream { state.outbound[stream] = OutboundStream() }
    }

    // MARK: body and trailers

    /// Queues body bytes on a stream whose head was sent without END_STREAM. They leave as the
    /// peer's window allows; each handover is reported as `.dataSent`.
    /// - Parameter endStream: true to end the body after these bytes (END_STREAM on the last DATA).
    /// - Throws: `HTTP2Error` (`.invalidState`) if the stream has no open body (unknown, closed,
    ///   or already ended).
    public func submitData(stream: Int32, _ bytes: some Collection<UInt8>, endStream: Bool) throws(HTTP2Error) {
        guard let out = state.outbound[stream], !out.ended else {
            throw HTTP2Error(.invalidState, "stream \(stream) has no open body to send on")
        }
        out.queue.append(contentsOf: bytes)
        out.ended = endStream
        try resume(stream, out)
    }

    /// Ends a stream's body with trailers (a HEADERS frame with END_STREAM after every queued
    /// byte), also when no byte was ever sent.
    /// - Throws: `HTTP2Error`: `.invalidField` (including any pseudo-header field), or
    ///   `.invalidState` if the stream has no open body.
    public func submitTrailers(stream: Int32, _ fields: [HTTP2Field]) throws(HTTP2Error) {
        let checked = try HTTP2HeaderBlock(pseudo: fields.filter(\.isPseudo), fields: fields.filter { !$0.isPseudo })
            .checkedForSending(allowPseudo: false)
        guard let out = state.outbound[stream], !out.ended else {
            throw HTTP2Error(.invalidState, "stream \(stream) has no open body to end with trailers")
        }
        out.trailers = checked
        out.ended = true
        try resume(stream, out)
    }

    /// Wakes the stream's data provider if it was waiting and now has something to send.
    private func resume(_ stream: Int32, _ out: OutboundStream) throws(HTTP2Error) {
        guard out.deferred, out.ended || !out.queue.isEmpty else { return }
        out.deferred = false
        try check(nghttp2_session_resume_data(handle, stream), "resume stream \(stream)")
    }

    /// Whether `stream` still takes body bytes (`submitData`, `submitTrailers`): its head went
    /// without END_STREAM, its body has not ended, and it is not closed (a peer's RST_STREAM).
    public func canSendBody(on stream: Int32) -> Bool {
        state.outbound[stream].map { !$0.ended } ?? false
    }

    /// Body bytes queued on `stream` and not yet handed to the wire.
    public func outboundQueuedBytes(stream: Int32) -> Int {
        state.outbound[stream]?.queue.count ?? 0
    }

    // MARK: control

    /// Resets a stream (RST_STREAM) with `code`; queued body bytes are dropped (`.dataDiscarded`).
    /// - Throws: `HTTP2Error` (`.submitRefused`) for stream 0.
    public func resetStream(_ stream: Int32, code: HTTP2ErrorCode) throws(HTTP2Error) {
        // Once per stream: the first reset of a stream whose HEADERS are still queued cancels
        // them, and a second went out as RST_STREAM on a stream the peer never saw.
        guard state.resetSubmitted.insert(stream).inserted else { return }
        try check(nghttp2_submit_rst_stream(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, code.rawValue),
                  "reset stream \(stream)")
    }

    /// Sends GOAWAY naming the last peer stream processed, so streams up to it finish and later
    /// ones are refused; the session finishes (`isFinished`) once the remaining streams close.
    public func goAway(code: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) throws(HTTP2Error) {
        state.goAwayExplained = true
        let rv = debugData.withUnsafeBufferPointer { debug in
            nghttp2_submit_goaway(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastProcessedStreamID, code.rawValue,
                                  debug.baseAddress, debug.count)
        }
        try check(rv, "GOAWAY")
    }

    /// Sends a SETTINGS frame with `settings`, after the one the session began with: a server's
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §3) once it knows it takes extended CONNECT.
    /// The library applies a value to what it accepts when the peer acknowledges the frame.
    public func submitSettings(_ settings: [HTTP2Setting]) throws(HTTP2Error) {
        var entries = settings.map { nghttp2_settings_entry(settings_id: Int32($0.id), value: $0.value) }
        try check(nghttp2_submit_settings(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count), "SETTINGS")
    }

    /// Server role: the first step of a graceful shutdown (RFC 9113 §6.8): a GOAWAY with the
    /// maximum stream id, so in-flight requests still arrive; follow with `goAway` after a round trip.
    public func shutdownNotice() throws(HTTP2Error) {
        try check(nghttp2_submit_shutdown_notice(handle), "shutdown notice")
    }

    /// Sends a PING with 8 opaque bytes (zeros if `nil`); the ACK arrives as `.pingAcknowledged`.
    public func ping(opaque: [UInt8]? = nil) throws(HTTP2Error) {
        let bytes = opaque ?? [UInt8](repeating: 0, count: 8)
        guard bytes.count == 8 else { throw HTTP2Error(.invalidState, "PING data is 8 bytes, not \(bytes.count)") }
        try check(nghttp2_submit_ping(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), bytes), "PING")
    }

    // MARK: flow control

    /// Acknowledges `count` received body bytes of `stream`, reopening the stream and connection
    /// windows by as much (WINDOW_UPDATE goes out once enough is consumed). Bytes of a stream that
    /// has closed still count for the connection.
    /// - Throws: `HTTP2Error` (`.submitRefused`) for stream 0 or a count beyond what was received.
    public func consume(stream: Int32, count: Int) throws(HTTP2Error) {
        guard count > 0 else { return }
        try check(nghttp2_session_consume(handle, stream, count), "consume \(count) on stream \(stream)")
    }

    /// Acknowledges `count` received body bytes on the connection window only. A relay calls it
    /// as DATA arrives and `consumeStream` when the other side took the bytes: then a stream
    /// whose reader is slow holds at most its own stream window, and never the connection's
    /// window that the other streams need (RFC 9113 §5.2.2).
    /// - Throws: `HTTP2Error` (`.submitRefused`) for a count beyond what was received.
    public func consumeConnection(count: Int) throws(HTTP2Error) {
        guard count > 0 else { return }
        try check(nghttp2_session_consume_connection(handle, count), "consume \(count) on the connection")
    }

    /// Acknowledges `count` received body bytes of `stream` on its stream window only (see
    /// `consumeConnection`). Nothing happens for a stream that has closed.
    /// - Throws: `HTTP2Error` (`.submitRefused`) for stream 0 or a count beyond what was received.
    public func consumeStream(_ stream: Int32, count: Int) throws(HTTP2Error) {
        guard count > 0 else { return }
        try check(nghttp2_session_consume_stream(handle, stream, count), "consume \(count) on stream \(stream)")
    }

    /// Sets how many body bytes the peer may send on `stream` beyond what was acknowledged
    /// (its receive window; a larger value goes out as WINDOW_UPDATE). Received bytes are still
    /// acknowledged only by `consume`.
    /// - Throws: `HTTP2Error` (`.submitRefused`) for an unknown stream or a size over 2^31 - 1.
    public func setReceiveWindow(stream: Int32, size: UInt32) throws(HTTP2Error) {
        try check(nghttp2_session_set_local_window_size(handle, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream,
                                                        Int32(clamping: size)), "window of stream \(stream)")
    }

    /// How many body bytes the peer currently lets us send on `stream` (the smaller of the stream
    /// and connection windows), or nil for an unknown stream.
    public func sendWindow(stream: Int32) -> Int? {
        let window = nghttp2_session_get_stream_remote_window_size(handle, stream)
        guard window >= 0 else { return nil }
        return min(Int(window), Int(nghttp2_session_get_remote_window_size(handle)))
    }
}
