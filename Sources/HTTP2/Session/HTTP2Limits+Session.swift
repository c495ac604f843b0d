import CNGHTTP2

extension HTTP2Limits {
    /// Sets the library options these limits imply, plus the ones every session here uses.
    func apply(to option: OpaquePointer) {
        // Flow control is the caller's (consume), so a relay never buffers beyond the window.
        nghttp2_option_set_no_auto_window_update(option, 1)
        nghttp2_option_set_max_settings(option, maxSettingsEntries)
        nghttp2_option_set_max_outbound_ack(option, maxOutboundAck)
        nghttp2_option_set_max_continuations(option, maxContinuations)
        nghttp2_option_set_stream_reset_rate_limit(option, streamResetBurst, streamResetRatePerSecond)
        nghttp2_option_set_max_deflate_dynamic_table_size(option, maxDeflateDynamicTableSize)
        nghttp2_option_set_no_closed_streams(option, keepClosedStreams ? 0 : 1)
        // HTTP messaging checks stay on (pseudo-headers, content-length, field characters).
    }

    /// Queues our SETTINGS and, if the connection window is above the protocol's 65 535, the
    /// WINDOW_UPDATE that raises it.
    /// - Returns: libnghttp2's return code (0 on success).
    func submitSettings(on session: OpaquePointer, role: HTTP2Session.Role) -> Int32 {
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: maxConcurrentStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                                   value: initialWindowSize),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_FRAME_SIZE.rawValue), value: maxFrameSize),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(clamping: maxHeaderListSize)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE.rawValue), value: headerTableSize),
        ]
        // RFC 9113 §6.5.2: only a client's value means anything; a server never sends 1.
        if role == .client {
            entries.append(nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue),
                                                  value: enablePush ? 1 : 0))
        }
        let rv = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
        guard rv == 0, Int32(clamping: connectionWindowSize) > CNGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE() else { return rv }
        return nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0,
                                                     Int32(clamping: connectionWindowSize))
    }
}
