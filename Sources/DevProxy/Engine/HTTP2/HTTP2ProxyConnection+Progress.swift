import Foundation

/// The record so far of long streams (a gRPC server stream or chat, a watch, an event stream, a
/// download), handed to the sinks that show running flows, so the web UI shows a stream's
/// messages and body as they come instead of when it ends, which for a feed may be never.
extension HTTP2ProxyConnection {
    /// Hands the sinks the record so far of each stream that is due (`ExchangeRecorder.progress`).
    func reportProgress(now: Date) {
        guard server.showsRunningFlows else { return }
        let redact = context.configuration.redactHeaders
        for exchange in streams.values where !exchange.answeredLocally {
            guard let flow = exchange.recorder.progress(of: exchange.draft, redact: redact, now: now) else { continue }
            server.progressed(flow)
        }
    }
}
