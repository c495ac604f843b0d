import CNGHTTP2

/// One HTTP/2 connection endpoint over libnghttp2, sans-IO: bytes in, events out, bytes out on
/// request. It never touches a socket.
///
/// Drive it from one thread at a time: feed what the socket read to `receive(_:)`, write what
/// `pendingOutput()` returns, and act on the events both produce (`receive` returns them; those
/// raised while producing output — data handed out, streams closed — come from `takeEvents()`).
/// The session sends its SETTINGS (and, as a client, the connection preface) in its first output.
///
/// Flow control is the caller's: received DATA is acknowledged to the peer only by
/// `consume(stream:count:)`, so a relay credits one side with what the other side sent.
public final class HTTP2Session {
    /// Which end of the connection this session is.
    public enum Role: Sendable {
        case client, server
    }

    public let role: Role
    public let limits: HTTP2Limits
    /// The `nghttp2_session`, owned here and freed in `deinit`; never handed out.
    let handle: OpaquePointer
    let state: SessionState
    /// The failure that ended the session, if one did.
    public private(set) var failure: HTTP2Error?
    /// Whether `mem_send` itself failed: then nothing more can be written either.
    private var sendFailed = false

    /// Creates a session and queues its SETTINGS (and the connection window update).
    /// - Throws: `HTTP2Error` (`.sessionFailed`) if libnghttp2 cannot allocate the session.
    public init(role: Role, limits: HTTP2Limits = HTTP2Limits()) throws(HTTP2Error) {
        self.role = role
        self.limits = limits
        let state = SessionState(isServer: role == .server, limits: limits)
        self.state = state

        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw HTTP2Error(.sessionFailed, "out of memory creating the callbacks")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        SessionCallbacks.install(on: callbacks)
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else {
            throw HTTP2Error(.sessionFailed, "out of memory creating the options")
        }
        defer { nghttp2_option_del(option) }
        limits.apply(to: option)

        var session: OpaquePointer?
        let userData = Unmanaged.passUnretained(state).toOpaque()
        let rv = role == .client ? nghttp2_session_client_new2(&session, callbacks, userData, option)
                                 : nghttp2_session_server_new2(&session, callbacks, userData, option)
        guard rv == 0, let session else {
            throw HTTP2Error(.sessionFailed, "cannot create the session", libraryError: rv)
        }
        handle = session
        try check(limits.submitSettings(on: session, role: role), "SETTINGS")
    }

    deinit {
        nghttp2_session_del(handle)
    }

    // MARK: bytes in

    /// Feeds bytes read from the peer and returns every event pending since the last call.
    /// - Throws: `HTTP2Error` (`.sessionFailed`) when the session cannot go on (flood, bad preface):
    ///   a GOAWAY is queued when possible; send `pendingOutput()` and close. Events raised before
    ///   the failure stay available from `takeEvents()`. Once failed, every call throws again.
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2Error) -> [HTTP2Event] {
        if let failure { throw failure }
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return takeEvents() }
        var offset = 0
        while offset < bytes.count {
            let rv = nghttp2_session_mem_recv(handle, base + offset, bytes.count - offset)
            if rv < 0 { throw fail(Int32(rv)) }
            if rv == 0 { break }
            offset += rv
        }
        return takeEvents()
    }

    /// Feeds bytes read from the peer; see `receive(_:)` for raw buffers.
    public func receive(_ bytes: some Collection<UInt8>) throws(HTTP2Error) -> [HTTP2Event] {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(HTTP2Error) in try receive(UnsafeRawBufferPointer(buffer)) }
        } ?? Array(bytes).withUnsafeBytes { buffer in
            Result { () throws(HTTP2Error) in try receive(buffer) }
        }
        return try result.get()
    }

    /// Every event raised since the last `receive` or `takeEvents`, oldest first.
    public func takeEvents() -> [HTTP2Event] {
        state.take()
    }

    // MARK: bytes out

    /// Bytes to write to the peer: frames the library has ready, as many as fit in `maxBytes`
    /// (one frame may pass it). Empty when there is nothing to send now.
    ///
    /// Producing output runs callbacks: queued body bytes leave (`.dataSent`), streams close;
    /// collect those events with `takeEvents()` afterwards.
    public func pendingOutput(maxBytes: Int = .max) -> [UInt8] {
        var output: [UInt8] = []
        while output.count < maxBytes && !sendFailed {
            var chunk: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(handle, &chunk)
            if n < 0 {
                sendFailed = true
                _ = fail(Int32(n))
                break
            }
            guard n > 0, let chunk else { break }
            output.append(contentsOf: UnsafeBufferPointer(start: chunk, count: n))
        }
        return output
    }

    /// Whether the session still expects bytes from the peer.
    public var wantsRead: Bool { failure == nil && nghttp2_session_want_read(handle) != 0 }
    /// Whether `pendingOutput()` has something to return.
    public var wantsWrite: Bool { !sendFailed && nghttp2_session_want_write(handle) != 0 }
    /// Whether the connection is done: neither reading nor writing (after GOAWAY and the last
    /// stream, or a failure). Close the socket.
    public var isFinished: Bool { !wantsRead && !wantsWrite }

    /// The highest peer-initiated stream id the session has processed (the GOAWAY value).
    public var lastProcessedStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(handle) }

    // MARK: errors

    /// Records a fatal library error, queues a GOAWAY if the library still can, and returns it.
    private func fail(_ libraryError: Int32) -> HTTP2Error {
        let text = String(cString: nghttp2_strerror(libraryError))
        let reason = state.lastErrorText.map { "\(text): \($0)" } ?? text
        let code: HTTP2ErrorCode = libraryError == NGHTTP2_ERR_FLOODED.rawValue ? .enhanceYourCalm : .protocolError
        state.goAwayExplained = true
        nghttp2_session_terminate_session(handle, code.rawValue)
        state.append(.protocolError(stream: 0, reason: reason))
        let error = HTTP2Error(.sessionFailed, reason, libraryError: libraryError)
        failure = error
        return error
    }

    /// Turns a library return code into a thrown `.submitRefused`.
    /// `what` is built only on failure: the consume and submit calls of every stream pass here.
    func check(_ rv: Int32, _ what: @autoclosure () -> String) throws(HTTP2Error) {
        guard rv < 0 else { return }
        throw HTTP2Error(.submitRefused, "\(what()): \(String(cString: nghttp2_strerror(rv)))", libraryError: rv)
    }
}
