import CNGHTTP2

/// The C callbacks libnghttp2 calls during `mem_recv` and `mem_send`. Each finds the session's
/// `SessionState` through `user_data` and turns what happened into `HTTP2Event`s.
enum SessionCallbacks {
    /// Sets every callback this module uses on a fresh `nghttp2_session_callbacks`.
    static func install(on callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
            let state = stateOf(userData)
            if frame!.pointee.hd.type == UInt8(NGHTTP2_PUSH_PROMISE.rawValue) {
                // Push is off (ENABLE_PUSH 0); until the peer ACKs that, refuse each promise
                // (the library resets the promised stream) rather than surface a stream never asked for.
                return state.pushEnabled ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
            }
            state.incoming = (frame!.pointee.hd.stream_id, SessionState.IncomingBlock())
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback2(callbacks) { _, frame, name, value, flags, userData in
            let state = stateOf(userData)
            let stream = frame!.pointee.hd.stream_id
            guard let current = state.incoming, current.stream == stream else { return 0 }
            let block = current.block
            let nameBuffer = nghttp2_rcbuf_get_buf(name), valueBuffer = nghttp2_rcbuf_get_buf(value)
            // Count before keeping anything: an HPACK bomb expands in the library's decoder one
            // field at a time (each capped), and is never accumulated here.
            let newSize = block.size + nameBuffer.len + valueBuffer.len + 32
            if newSize > state.maxHeaderListSize {
                block.drop(size: newSize)
            } else {
                let neverIndex = flags & UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) != 0
                let field = HTTP2Field(name: state.bytes(of: name!, nameBuffer),
                                       value: state.bytes(of: value!, valueBuffer), neverIndex: neverIndex)
                block.append(field, size: newSize)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_invalid_header_callback(callbacks) { _, frame, name, nameLength, _, _, _, userData in
            let field = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
            stateOf(userData).append(.protocolError(stream: frame!.pointee.hd.stream_id,
                                                  reason: "invalid header field '\(field)'"))
            // Keep the library's default: the stream is reset with PROTOCOL_ERROR.
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { session, frame, userData in
            SessionCallbacks.frameReceived(session!, frame!.pointee, stateOf(userData))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { session, _, stream, data, length, userData in
            let state = stateOf(userData)
            if state.isRejected(stream) {
                nghttp2_session_consume(session, stream, length)
                return 0
            }
            state.append(.data(stream: stream, bytes: Array(UnsafeBufferPointer(start: data, count: length)),
                               endStream: false))
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, stream, code, userData in
            stateOf(userData).close(stream: stream, code: code)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, userData in
            let hd = frame!.pointee.hd
            let state = stateOf(userData)
            if hd.type == UInt8(NGHTTP2_GOAWAY.rawValue), frame!.pointee.goaway.error_code != 0, !state.goAwayExplained {
                // The library ended the connection for a peer's fault; its debug data says which.
                let goAway = frame!.pointee.goaway
                let debug = String(decoding: UnsafeBufferPointer(start: goAway.opaque_data, count: goAway.opaque_data_len),
                                   as: UTF8.self)
                let code = HTTP2ErrorCode(rawValue: goAway.error_code)
                var reason = debug.isEmpty ? "GOAWAY \(code)" : "GOAWAY \(code): \(debug)"
                if state.isServer, code == .internalError, debug.isEmpty, state.resetsReceived >= state.streamResetBurst {
                    reason = "it reset \(state.resetsReceived) streams, faster than the \(state.streamResetBurst) at once "
                        + "(then 33 a second) DevProxy allows against rapid reset (CVE-2023-44487): GOAWAY \(code)"
                }
                state.append(.protocolError(stream: 0, reason: reason))
                state.goAwayExplained = true
            }
            if hd.type == UInt8(NGHTTP2_RST_STREAM.rawValue) {
                stateOf(userData).append(.streamReset(stream: hd.stream_id,
                                                   code: HTTP2ErrorCode(rawValue: frame!.pointee.rst_stream.error_code),
                                                   byPeer: false))
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks) { _, frame, _, userData in
            // A request HEADERS the library dropped (GOAWAY arrived first): the stream never opened,
            // so no close callback follows; report it as the GOAWAY's refused streams are reported,
            // with the request handed back whole (nothing of it went out).
            if frame!.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue), frame!.pointee.headers.cat == NGHTTP2_HCAT_REQUEST {
                stateOf(userData).close(stream: frame!.pointee.hd.stream_id, code: HTTP2ErrorCode.refusedStream.rawValue,
                                        notSent: true)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks) { _, frame, libraryError, userData in
            let stream = frame!.pointee.hd.stream_id
            if frame!.pointee.hd.type == UInt8(NGHTTP2_PUSH_PROMISE.rawValue) {
                // Every PUSH_PROMISE the library refuses here is a connection error (RFC 9113 §6.6),
                // whatever stream carried it: the connection's fault, said as such.
                let reason = stateOf(userData).isServer
                    ? "a PUSH_PROMISE from the client (only a server may push, RFC 9113 §8.4)"
                    : "a PUSH_PROMISE though push was turned off (SETTINGS_ENABLE_PUSH 0, RFC 9113 §6.6)"
                stateOf(userData).append(.protocolError(stream: 0, reason: reason))
            } else if stream != 0, libraryError == NGHTTP2_ERR_REFUSED_STREAM.rawValue {
                // Over the concurrent streams allowed: a refusal, not the peer's fault.
                stateOf(userData).append(.streamRefused(stream: stream))
            } else if stream != 0 {
                stateOf(userData).append(.protocolError(stream: stream, reason: String(cString: nghttp2_strerror(libraryError))))
            }
            return 0
        }
        nghttp2_session_callbacks_set_error_callback2(callbacks) { _, _, message, length, userData in
            let text = String(decoding: UnsafeRawBufferPointer(start: message, count: length), as: UTF8.self)
            // Kept for a thrown error's reason; the event comes with the GOAWAY the library sends,
            // since not every connection error passes through here.
            stateOf(userData).lastErrorText = text
            return 0
        }
    }


    /// A complete frame arrived (HEADERS after its CONTINUATIONs; DATA after its chunks).
    fileprivate static func frameReceived(_ session: OpaquePointer, _ frame: nghttp2_frame, _ state: SessionState) {
        let hd = frame.hd
        let endStream = hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(hd.type) {
        case NGHTTP2_DATA.rawValue where endStream && !state.isRejected(hd.stream_id):
            state.append(.data(stream: hd.stream_id, bytes: [], endStream: true))
        case NGHTTP2_HEADERS.rawValue:
            guard let current = state.incoming, current.stream == hd.stream_id else { return }
            state.incoming = nil
            let block = current.block
            guard !state.isRejected(hd.stream_id) else { return }
            let isRequest = frame.headers.cat == NGHTTP2_HCAT_REQUEST
            if block.tooLarge {
                reject(session, stream: hd.stream_id, size: block.size, isRequest: isRequest, state)
            } else {
                state.finishBlock(block, stream: hd.stream_id, isRequest: isRequest, endStream: endStream)
            }
        case NGHTTP2_RST_STREAM.rawValue:
            state.resetsReceived &+= 1
            state.append(.streamReset(stream: hd.stream_id, code: HTTP2ErrorCode(rawValue: frame.rst_stream.error_code),
                                      byPeer: true))
        case NGHTTP2_SETTINGS.rawValue where hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0:
            let entries = UnsafeBufferPointer(start: frame.settings.iv, count: frame.settings.niv)
            state.append(.settingsReceived(entries.map { HTTP2Setting(id: UInt16(truncatingIfNeeded: $0.settings_id),
                                                                       value: $0.value) }))
        case NGHTTP2_PING.rawValue:
            let opaque = withUnsafeBytes(of: frame.ping.opaque_data) { Array($0) }
            state.append(hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 ? .pingAcknowledged(opaque: opaque)
                                                                          : .pingReceived(opaque: opaque))
        case NGHTTP2_GOAWAY.rawValue:
            let debug = Array(UnsafeBufferPointer(start: frame.goaway.opaque_data, count: frame.goaway.opaque_data_len))
            state.append(.goAway(lastStreamID: frame.goaway.last_stream_id,
                                 code: HTTP2ErrorCode(rawValue: frame.goaway.error_code), debugData: debug))
        default:
            break
        }
    }

    /// Answers a header block beyond `maxHeaderListSize`: 431 to a request head (RFC 9113 §10.5.1
    /// "can send an HTTP 431") with a one-line text body saying why, RST_STREAM(CANCEL) to anything
    /// else; later frames are dropped.
    private static func reject(_ session: OpaquePointer, stream: Int32, size: Int, isRequest: Bool,
                               _ state: SessionState) {
        state.rejected.insert(stream)
        state.append(.headerListTooLarge(stream: stream, size: size))
        if isRequest {
            // A bare 431 left the client (curl, Python h2) with an empty body and no reason.
            let out = OutboundStream()
            out.queue.append(HTTP2Limits.headerListAnswer(size: size, limit: state.maxHeaderListSize))
            out.ended = true
            let head = [HTTP2Field(":status", "431"), HTTP2Field("content-type", "text/plain; charset=utf-8"),
                        HTTP2Field("content-length", "\(out.queue.count)")]
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readData)
            let rv = withNameValueList(head) { nghttp2_submit_response(session, stream, $0, $1, &provider) }
            if rv == 0 {
                state.outbound[stream] = out
                return
            }
        }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, HTTP2ErrorCode.cancel.rawValue)
    }

    /// The data provider of every stream we send a body on: serves the stream's `OutboundStream`.
    static let readData: nghttp2_data_source_read_callback = { session, stream, buffer, length, flags, _, userData in
        let state = stateOf(userData)
        guard let out = state.outbound[stream] else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let n = out.queue.read(into: buffer!, max: length)
        if n > 0 { state.append(.dataSent(stream: stream, count: n)) }
        if out.queue.isEmpty && out.ended {
            flags!.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            out.finished = true
            if let trailers = out.trailers {
                // The trailers carry END_STREAM; the library allows submitting them from here.
                flags!.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
                let rv = withNameValueList(trailers) { nghttp2_submit_trailer(session, stream, $0, $1) }
                if rv != 0 { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
            }
        } else if n == 0 {
            out.deferred = true
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        return n
    }
}

/// The state behind a callback's `user_data` (a free function: C callbacks cannot capture).
private func stateOf(_ userData: UnsafeMutableRawPointer?) -> SessionState {
    Unmanaged<SessionState>.fromOpaque(userData!).takeUnretainedValue()
}
