import HTTP2

extension HTTP2Session {
    /// Writes everything the session has to send to `stream` and returns the events sending
    /// raised (data handed to the wire, streams closed), which only `takeEvents` reports.
    func flush(to stream: ByteStream) throws -> [HTTP2Event] {
        var events: [HTTP2Event] = []
        while true {
            let output = pendingOutput()
            events += takeEvents()
            guard !output.isEmpty else { return events }
            try stream.write(output)
        }
    }
}
