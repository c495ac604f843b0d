import HTTP2

extension HTTP2Session {
    /// At most this much output (plus the frame that crosses it) is gathered per write.
    static let outputPiece = 64 * 1024

    /// Writes everything the session has to send to `stream` and returns the events sending
    /// raised (data handed to the wire, streams closed), which only `takeEvents` reports.
    func flush(to stream: ByteStream) throws -> [HTTP2Event] {
        var events: [HTTP2Event] = []
        var wrote = false
        while true {
            // In pieces of ~64 KiB: a large window's worth of DATA frames is not gathered into
            // one array (which, past malloc's mmap threshold, costs fresh zeroed pages every
            // time); the stream's buffer sends them in full-size writes, and the last flush sends
            // the rest.
            let output = pendingOutput(maxBytes: Self.outputPiece)
            events += takeEvents()
            guard !output.isEmpty else {
                if wrote { try stream.flush() }
                return events
            }
            try stream.write(output, flush: false)
            wrote = true
        }
    }
}
