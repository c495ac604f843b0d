import Foundation

/// The record so far of long gRPC-family calls (a server stream, a bidirectional chat, a watch),
/// handed to the sinks that show running flows, so the web UI lists a call's messages as they
/// come instead of when the call ends, which for a stream may be never.
extension HTTP2ProxyConnection {
    /// A call is shown running once it has run this long (shorter ones are shown when they end),
    /// then again at most this often, and only when it recorded more.
    static let progressInterval: TimeInterval = 1

    /// Hands the sinks the record so far of each gRPC-family stream that is due (`progressInterval`).
    func reportProgress(now: Date) {
        guard server.showsRunningFlows else { return }
        let redact = context.configuration.redactHeaders
        for exchange in streams.values where exchange.recorder.grpc != nil && !exchange.answeredLocally {
            guard now.timeIntervalSince(exchange.recorder.sendStarted) >= Self.progressInterval else { continue }
            if let last = exchange.lastProgress {
                guard now.timeIntervalSince(last.at) >= Self.progressInterval,
                      exchange.recorder.progressMark != last.mark else { continue }
            }
            server.progressed(exchange.snapshot(redact: redact, now: now))
        }
    }
}
