import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import GRPCWire
import Testing
import TestSupport

/// The console line per flow: exchanges, tunnels and failures, in plain and terminal style.
@Suite struct ConsoleFlowPrinterTests {
    let utc = TimeZone(identifier: "UTC")!

    @Test func anExchange() {
        var flow = FlowSamples.get
        flow.response?.body?.size = 1234
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc)
                == "12:01:02 GET https://api.example.com/v1/x?q=a%20b&lang=en → 200 1.2 kB 35 ms")
    }

    /// A client refused for its proxy credentials: the line says whether they were missing or
    /// wrong (curl with the wrong password read `the client did not send the proxy credentials`).
    @Test func aRefusedProxyCredentialSaysWhetherItWasMissingOrWrong() throws {
        let proxy = try ProxyHarness(configure: { $0.proxyCredentials = [ProxyCredential(user: "qa", password: "s3cret")] })
        let url = "http://127.0.0.1:9/"
        _ = try proxy.curl(["-o", "/dev/null", url])
        _ = try proxy.curl(["-o", "/dev/null", "--proxy-user", "qa:guess", url])
        let lines = proxy.flows(count: 2).map { String(ConsoleFlowPrinter.line(for: $0, timeZone: utc).dropFirst(9)) }
        let refused = "✗ GET http://127.0.0.1:9/ proxy_auth_required: the proxy requires credentials (--proxy-auth) and "
            + "the client's were missing or wrong — "
        #expect(lines == [refused + "proxy credentials required", refused + "wrong proxy credentials"])
    }

    /// A request `--block-list` answered with 444 (the connection closed) is said to be blocked by
    /// the rule: the line read `the destination is DevProxy's own web UI, which the proxy never
    /// forwards to`, the one other source of `destination_refused`.
    @Test func aBlockedRequestSaysWhichRuleBlockedIt() throws {
        let rule = "|~d telemetry\\.test|444"
        let proxy = try ProxyHarness(configure: { $0.mapRules = try! MapRules(remote: [], local: [], block: [rule]) })
        let result = try proxy.curl(["-o", "/dev/null", "http://telemetry.test/x"])
        #expect(result.status == 52, "curl: empty reply from server: \(result.output)")
        let line = try #require(proxy.flows(count: 1).first.map { ConsoleFlowPrinter.line(for: $0, timeZone: utc) })
        #expect(line.hasSuffix("✗ GET http://telemetry.test/x destination_refused: DevProxy did not send it on: a --block-list "
                               + "rule, or a destination that is DevProxy itself (its web UI or one of its listeners) — "
                               + "blocked by DevProxy's --block-list \(rule): the connection was closed without an answer (444)"),
                "\(line)")
    }

    /// A client that gave up on a silent origin: the line says where DevProxy was when the client
    /// left (`… while DevProxy was still connecting to HOST:PORT …`), which pointed at the origin;
    /// it read only `the client hung up before the exchange finished`, as if the client were at fault.
    @Test func aClientThatGaveUpSaysWhatItWaitedFor() throws {
        let silent = try Listener(host: "127.0.0.1", port: 0)   // completes TCP, never speaks TLS
        let held = Mutex<[Socket]>([])
        let accepting = Thread { while let socket = (try? silent.accept(timeout: 10)) ?? nil { held.withLock { $0.append(socket) } } }
        accepting.start()
        let proxy = try ProxyHarness()
        let result = try proxy.curl(["--http1.1", "-m", "1", "https://localhost:\(silent.address.port)/"])
        #expect(result.status != 0, "\(result.output)")
        let line = try #require(proxy.flows(count: 1).first.map { ConsoleFlowPrinter.line(for: $0, timeZone: utc) })
        #expect(line.contains("client_closed: the client hung up before the exchange finished — the client closed the "
                              + "connection after "), "\(line)")
        #expect(line.contains("while DevProxy was still connecting to localhost:\(silent.address.port)"), "\(line)")
    }

    /// A failed gRPC call is an HTTP 200: the line names its gRPC status and what its server said
    /// of it (`grpc-message`, cut at 100 characters, its controls escaped); a successful one neither.
    @Test func aFailedGRPCCallSaysItsStatus() {
        var flow = FlowSamples.get
        flow.response?.body?.size = 0
        flow.grpc = GRPCFlowInfo(service: "lab.Echo", method: "Fail", status: 5, message: "gone")
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc)
                == "12:01:02 GET https://api.example.com/v1/x?q=a%20b&lang=en → 200 gRPC NOT_FOUND 0 B 35 ms (grpc-message: gone)")
        flow.grpc?.message = "no user \u{1B}[2J" + String(repeating: "x", count: 200)
        let long = ConsoleFlowPrinter.line(for: flow, timeZone: utc)
        #expect(long.hasSuffix("(grpc-message: no user \\x1B[2J" + String(repeating: "x", count: 87) + "…)"), "\(long)")
        flow.grpc?.message = "gone"
        #expect(ConsoleFlowPrinter.line(for: flow, style: .terminal, timeZone: utc).contains("\u{1B}[31mgRPC NOT_FOUND\u{1B}[0m"))
        flow.grpc?.status = 0
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc).hasSuffix("→ 200 0 B 35 ms"))
        flow.grpc?.status = 99
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc).contains("→ 200 gRPC 99 0 B"))
    }

    @Test func aTunnel() {
        #expect(ConsoleFlowPrinter.line(for: FlowSamples.tunnel, timeZone: utc)
                == "12:01:02 TUNNEL api.apple.com:443 ↑1.2 kB ↓30 kB 5.1 s (passthrough rule *.apple.com)")
    }

    @Test func aRejectedCertificate() {
        #expect(ConsoleFlowPrinter.line(for: FlowSamples.rejected, timeZone: utc)
                == "12:01:02 ✗ CONNECT pinned.example.com:443 client_rejected_certificate (unknown_ca): "
                + "the app pins a key this chain does not contain, or the device does not trust the root")
    }

    /// A connection the client opened and closed without a request after sitting silent (a
    /// browser's preconnect) is a dim line, not a red failure: browsers leave many.
    @Test func anUnusedConnectionIsADimLine() {
        var flow = FlowSamples.rejected
        flow.error = Flow.FlowError(kind: "client_closed_unused", message: "the client completed the TLS handshake, …")
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc)
                == "12:01:02 UNUSED pinned.example.com:443 (a connection the client opened and closed without a request)")
        let styled = ConsoleFlowPrinter.line(for: flow, style: .terminal, timeZone: utc)
        #expect(styled.contains("\u{1B}[2m") && !styled.contains("\u{1B}[31m"), "\(styled.debugDescription)")
    }

    @Test func detailFromTheMessageFollowsTheExplanationWhereItHelps() {
        var flow = FlowSamples.rejected
        flow.error = Flow.FlowError(kind: "upstream_certificate_invalid", message: "certificate has expired",
                                    alert: nil)
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc).hasSuffix(" — certificate has expired"))
        flow.error = Flow.FlowError(kind: "something_new", message: "what happened", alert: nil)
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc).hasSuffix("something_new: what happened"))
    }

    /// A flow that failed on a slowed link says so, as a finished one does (it said nothing, so a
    /// timeout under `--throttle 3g` read as the origin's fault); Offline's failure names itself.
    @Test func aFailureOnAThrottledLinkSaysItWasThrottled() {
        var flow = FlowSamples.rejected
        flow.error = Flow.FlowError(kind: "upstream_reset", message: "the origin reset the connection", alert: nil)
        flow.throttle = "3g (1.6 Mbit/s down, 750 kbit/s up, +563 ms)"
        #expect(ConsoleFlowPrinter.line(for: flow, timeZone: utc)
                    .hasSuffix(" (throttled: 3g (1.6 Mbit/s down, 750 kbit/s up, +563 ms))"))
        flow.error = Flow.FlowError(kind: "offline", message: "the throttle menu is set to Offline", alert: nil)
        flow.throttle = "offline"
        #expect(!ConsoleFlowPrinter.line(for: flow, timeZone: utc).contains("throttled"))
    }

    @Test func timeIsLocalToTheGivenZone() {
        let line = ConsoleFlowPrinter.line(for: FlowSamples.tunnel, timeZone: TimeZone(secondsFromGMT: 2 * 3600)!)
        #expect(line.hasPrefix("14:01:02 "))
    }

    @Test func colourOnlyInTerminalStyle() {
        let plain = ConsoleFlowPrinter.line(for: FlowSamples.rejected, style: .plain, timeZone: utc)
        let terminal = ConsoleFlowPrinter.line(for: FlowSamples.rejected, style: .terminal, timeZone: utc)
        #expect(!plain.contains("\u{1B}"))
        #expect(terminal.contains("\u{1B}[31m✗ CONNECT"))
        var notFound = FlowSamples.get
        notFound.response?.status = 404
        #expect(ConsoleFlowPrinter.line(for: notFound, style: .terminal, timeZone: utc).contains("\u{1B}[33m404"))
    }

    /// A URL's bytes reach the console as the client sent them, and the HTTP/1 parser lets a C1
    /// CSI (U+009B, `ESC [` to a terminal that takes 8-bit controls) and a right-to-left override
    /// through as obs-text: the line shows them escaped, as `cat -v` would, in both styles; the
    /// flow keeps the URL as it came.
    @Test func whatTheClientSentIsShownWithItsTerminalControlsEscaped() throws {
        let proxy = try ProxyHarness()
        let script = """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
            s.sendall(b"GET http://127.0.0.1:9/a\\xc2\\x9b2J\\xe2\\x80\\xaeevil HTTP/1.1\\r\\nHost: 127.0.0.1:9\\r\\n\\r\\n")
            print(s.recv(100)[:12])
            """
        let result = try Subprocess.run("python3", ["-c", script, String(proxy.port)], timeout: 20)
        #expect(result.status == 0, "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        for style in [ConsoleFlowPrinter.Style.plain, .terminal] {
            let line = ConsoleFlowPrinter.line(for: flow, style: style, timeZone: utc)
            #expect(line.contains("http://127.0.0.1:9/a\\x9B2J\\u202Eevil"), "\(line)")
            #expect(!line.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x202E }, "\(line)")
        }
        #expect(flow.request?.url.unicodeScalars.contains { $0.value == 0x202E } == true, "\(flow.request?.url ?? "")")
    }

    @Test func thePrinterEmitsOneLinePerFlow() {
        let lines = PrintedLines()
        let printer = ConsoleFlowPrinter(timeZone: utc) { lines.append($0) }
        FlowSamples.all.forEach(printer.record)
        #expect(printer.flush(timeout: 10))
        #expect(lines.all.count == 4)
        #expect(lines.all[2].hasPrefix("12:01:02 TUNNEL"))
    }

    @Test func humanSizes() {
        #expect(HumanUnits.size(0) == "0 B")
        #expect(HumanUnits.size(999) == "999 B")
        #expect(HumanUnits.size(1000) == "1.0 kB")
        #expect(HumanUnits.size(1234) == "1.2 kB")
        #expect(HumanUnits.size(30_000) == "30 kB")
        #expect(HumanUnits.size(999_999) == "1.0 MB")
        #expect(HumanUnits.size(5_300_000_000) == "5.3 GB")
    }

    @Test func humanDurations() {
        #expect(HumanUnits.duration(milliseconds: 35) == "35 ms")
        #expect(HumanUnits.duration(milliseconds: 999.4) == "999 ms")
        #expect(HumanUnits.duration(milliseconds: 5100) == "5.1 s")
        #expect(HumanUnits.duration(milliseconds: 125_000) == "2 min 5 s")
    }

    @Test func timestampsParseWithOffsetsAndFractions() {
        #expect(ISO8601.date("1970-01-01T00:00:00Z")?.timeIntervalSince1970 == 0)
        #expect(ISO8601.date("2026-03-01T12:01:02.250Z")?.timeIntervalSince1970 == 1_772_366_462.25)
        #expect(ISO8601.date("2026-03-01T14:01:02+02:00")?.timeIntervalSince1970 == 1_772_366_462)
        #expect(ISO8601.date("2026-03-01 12:01") == nil)
        #expect(FlowTimestamp.milliseconds(from: FlowSamples.get.started, to: FlowSamples.get.ended) == 35)
    }
}

/// Lines collected from the printer's output closure (called on the printer's writer thread).
final class PrintedLines: @unchecked Sendable {
    // @unchecked: `lines` is only touched under `lock`.
    private var lines: [String] = []
    private let lock = NSLock()
    var all: [String] { lock.withLock { lines } }
    func append(_ line: String) { lock.withLock { lines.append(line) } }
}

/// The console's explanations hold for HTTP/1.1 and HTTP/2 alike: an HTTP/2 client's bad request
/// and an HTTP/2 origin's bad response were "not valid HTTP/1.1", and an HTTP/1.1 client told it
/// "got the same code" as an origin's RST_STREAM when it got a 502.
@Suite struct FlowErrorExplanationTests {
    @Test func explanationsNameNoWrongProtocol() {
        for kind in FlowErrorKind.allCases {
            #expect(!kind.explanation.contains("valid HTTP/1.1"), "\(kind)")
        }
        #expect(FlowErrorKind.upstreamReset2.explanation.contains("an HTTP/1.1 client a 502"))
    }
}
