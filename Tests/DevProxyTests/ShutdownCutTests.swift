@testable import DevProxy
import Foundation
import Testing

/// Which flows emitted while the proxy stops are recorded as `aborted` (`ProxyServer.isCut`).
@Suite struct ShutdownCutTests {
    private static let stopBegan: TimeInterval = 1_000

    private static func flow(error kind: FlowErrorKind?, at time: TimeInterval?, answered: Bool) -> Flow {
        var flow = FlowSamples.get
        flow.response = answered ? flow.response : nil
        flow.error = kind.map { Flow.FlowError(kind: $0.rawValue, message: "m", alert: nil, recordedAt: time) }
        return flow
    }

    /// An upstream that timed out before the stop keeps its own cause, even when its flow (a 504
    /// already sent) reaches the sinks after the stop began: CI once saw it recorded as aborted.
    @Test func aFailureBeforeTheStopKeepsItsCause() {
        #expect(!ProxyServer.isCut(Self.flow(error: .upstreamTimeout, at: Self.stopBegan - 0.5, answered: true),
                                   stopBegan: Self.stopBegan))
        #expect(!ProxyServer.isCut(Self.flow(error: .clientTimeout, at: Self.stopBegan - 3, answered: false),
                                   stopBegan: Self.stopBegan))
    }

    @Test func aFailureAfterTheStopIsTheCut() {
        #expect(ProxyServer.isCut(Self.flow(error: .upstreamTimeout, at: Self.stopBegan + 0.1, answered: true),
                                  stopBegan: Self.stopBegan))
        // A failure with no time (not recorded through a draft) is taken as the cut, as before.
        #expect(ProxyServer.isCut(Self.flow(error: .upstreamTimeout, at: nil, answered: true), stopBegan: Self.stopBegan))
    }

    @Test func anUnansweredFlowWithoutAFailureIsTheCutButATunnelIsNot() {
        #expect(ProxyServer.isCut(Self.flow(error: nil, at: nil, answered: false), stopBegan: Self.stopBegan))
        #expect(!ProxyServer.isCut(Self.flow(error: nil, at: nil, answered: true), stopBegan: Self.stopBegan))
        var tunnel = Self.flow(error: nil, at: nil, answered: false)
        tunnel.mode = .tunnel
        #expect(!ProxyServer.isCut(tunnel, stopBegan: Self.stopBegan))
    }

    /// `recordedAt` is not logged and does not make a flow read back from the log unequal.
    @Test func theTimeIsNotLogged() throws {
        let flow = Self.flow(error: .upstreamTimeout, at: 5, answered: true)
        let line = JSONLinesFlowLog.line(for: flow)
        #expect(!String(decoding: line, as: UTF8.self).contains("recorded"))
        let read = try JSONDecoder().decode(Flow.self, from: Data(line))
        #expect(read.error?.recordedAt == nil && read.error == flow.error)
    }
}
