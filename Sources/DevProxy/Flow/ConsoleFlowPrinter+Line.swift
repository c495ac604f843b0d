import CertAuthority
import Foundation
import GRPCWire
import HTTPTypes

extension ConsoleFlowPrinter {
    /// The console line for one flow. Pure: same flow, style and zone, same line.
    ///
    ///     12:01:02 GET https://api.example.com/v1/x → 200 1.2 kB 35 ms
    ///     12:01:02 POST https://api.example.com/lab.Echo/Fail → 200 gRPC NOT_FOUND 0 B 3 ms
    ///     12:01:02 GET https://shop.example.com/ → 200 14 kB 80 ms (after 103)
    ///     12:01:02 PUT https://api.example.com/upload → 413 20 B 9 ms (request body cut after 64 kB)
    ///     12:01:02 TUNNEL api.apple.com:443 ↑1.2 kB ↓30 kB 5.1 s (passthrough rule *.apple.com)
    ///     12:01:02 UNUSED www.example.com:443 (a connection the client opened and closed without a request)
    ///     12:01:02 ✗ CONNECT pinned.example.com:443 client_rejected_certificate (unknown_ca): the app pins …
    ///     12:01:02 ✗ GET https://api.example.com/feed upstream_timeout: … (throttled: 3g (…))
    ///     12:01:02 ✗ POST https://api.example.com/lab.Echo/Quiet client_reset: … (gRPC DEADLINE_EXCEEDED)
    ///     12:01:02 ✗ from 127.0.0.1:50412 bad_request: … — the client began a TLS handshake on the proxy's …
    ///
    /// The time is the flow's start in `timeZone`; sizes are the response body (or the
    /// tunnelled bytes each way); the duration runs from start to end.
    public static func line(for flow: Flow, style: Style = .plain, timeZone: TimeZone = .current) -> String {
        let paint = Paint(style: style)
        let time = clock(flow.started, timeZone: timeZone)
        let duration = FlowTimestamp.milliseconds(from: flow.started, to: flow.ended)
            .map(HumanUnits.duration(milliseconds:)) ?? "?"
        // A CONNECT's target as an authority: an IPv6 literal in brackets (`[::1]:8443`, not `::1:8443`).
        // What came from the network is shown with its terminal controls escaped (`TerminalText`):
        // a URL can carry a C1 CSI or a bidirectional override the HTTP parsers let through.
        let server = TerminalText.visible(URIHost.authority(host: flow.server.host, port: flow.server.port))
        // A connection refused before any request or target was read says who it came from.
        let target = flow.request.map { TerminalText.visible("\($0.method) \($0.url)") }
            ?? (flow.server.host.isEmpty ? "from \(flow.client)" : "CONNECT \(server)")

        if flow.error?.kind == FlowErrorKind.clientClosedUnused.rawValue {
            // Browsers open connections ahead of need and close the ones they did not use: no
            // failure to act on, so not a red line (the flow log and the session keep it).
            return "\(time) "
                + paint.dim("UNUSED \(server) (a connection the client opened and closed without a request)")
        }
        if let error = flow.error {
            var text = "✗ \(target) \(error.kind)"
            if let alert = error.alert { text += " (\(alert))" }
            if let kind = FlowErrorKind(rawValue: error.kind) {
                text += ": " + kind.explanation
                if kind.messageAddsDetail && !error.message.isEmpty { text += " — " + TerminalText.visible(error.message) }
            } else if !error.message.isEmpty {
                text += ": " + TerminalText.visible(error.message)
            }
            // A gRPC call that failed this way still has the status its client reads (a reset as its
            // deadline passed is DEADLINE_EXCEEDED, a lost origin UNAVAILABLE): the line says it.
            if let code = flow.grpc?.status, code != 0 {
                text += " (gRPC \(GRPCStatus.name(of: code) ?? String(code)))"
            }
            // A request --map-remote sent elsewhere names the URL the app asked for, as a line that
            // succeeded does: the target shown is where it went (the local build not started, say).
            if let mapped = flow.mapped, mapped.rule == "map-remote" {
                text += " (mapped from \(TerminalText.visible(mapped.from)))"
            }
            if let intercept = flow.intercept { text += breakpointNote(intercept) }
            if let intercept = flow.interceptResponse { text += responseBreakpointNote(intercept) }
            // A timeout or reset on a slowed link says it was slowed (Offline's own error says so already).
            if let throttle = flow.throttle, error.kind != FlowErrorKind.offline.rawValue {
                text += " (throttled: \(throttle))"
            }
            return "\(time) " + paint.red(text)
        }

        if flow.mode == .tunnel, let tunnel = flow.tunnel {
            let text = "TUNNEL \(server) ↑\(HumanUnits.size(tunnel.bytesFromClient)) "
                + "↓\(HumanUnits.size(tunnel.bytesFromServer)) \(duration) (\(tunnel.reason))"
                + (flow.throttle.map { " (throttled: \($0))" } ?? "")
            return "\(time) " + paint.dim(text)
        }

        var text = "\(time) \(target) → "
        if let response = flow.response {
            text += paint.status(response.status) + " "
            if let code = flow.grpc?.status, code != 0 {
                // A failed gRPC call is an HTTP 200: its status says so.
                text += paint.red("gRPC \(GRPCStatus.name(of: code) ?? String(code))") + " "
            }
            text += HumanUnits.size(response.body?.size ?? 0)
        } else {
            text += "no response"
        }
        text += " \(duration)"
        // What the failed call's server said (`grpc-message`), which often names the cause: at most
        // 100 characters of it, its controls escaped (it is the peer's text).
        if flow.response != nil, let grpc = flow.grpc, grpc.status.map({ $0 != 0 }) == true,
           let message = grpc.message, !message.isEmpty {
            let shown = message.count > 100 ? message.prefix(99) + "…" : Substring(message)
            text += " (grpc-message: \(TerminalText.visible(String(shown))))"
        }
        if let informational = flow.informational, let first = informational.first {
            // `(after 103)`; several: `(after 3 informational responses: 102, 103)`.
            let count = informational.count + (flow.informationalNotKept ?? 0)
            var statuses: [Int] = []
            for record in informational where !statuses.contains(record.status) { statuses.append(record.status) }
            text += count == 1 ? " (after \(first.status))"
                : " (after \(count) informational responses: \(statuses.map(String.init).joined(separator: ", ")))"
        }
        if let cut = flow.request?.bodyCut {
            text += " (request body cut after \(HumanUnits.size(cut.sent)))"
        }
        if let mapped = flow.mapped {
            // `(mapped from https://api.example.com/v1/user)`, `(map-local /work/mocks/user.json)`.
            // `(headers: set X-Env, removed Cookie)` for `--modify-headers`, and `(response headers:
            // removed Strict-Transport-Security)` for what it changed on the response.
            let changes = mapped.headers ?? []
            let onRequest = changes.filter { !$0.isOnResponse }.map { "\($0.action) \($0.name)" }
            let onResponse = changes.filter(\.isOnResponse).map { "\($0.action) \($0.name)" }
            if mapped.rule == "modify-headers" || mapped.rule == "modify-body" {
                if !onRequest.isEmpty { text += " (headers: \(onRequest.joined(separator: ", ")))" }
            } else if mapped.rule == "block-list" {
                text += " (blocked by --block-list \(mapped.by.joined()))"
            } else if mapped.rule == "mock" {
                // `(mock |~m GET|/v1/user$)`: answered by a mock made in the web UI's Rules view.
                text += " (mock \(mapped.by.last ?? ""))"
            } else if mapped.rule != "map-local" {
                text += " (mapped from \(TerminalText.visible(mapped.from)))"
            } else if let missing = mapped.missing {
                text += " (map-local: none of \(missing.joined(separator: ", ")))"
            } else {
                text += " (map-local \(mapped.to))"
            }
            if !onResponse.isEmpty { text += " (response headers: \(onResponse.joined(separator: ", ")))" }
            // `(response body: 2 replacements)` for `--modify-body` (`request body` for the request's),
            // `(body not modified: …)` when it could not.
            for side in ["request", "response"] {
                let changes = (mapped.body ?? []).filter { $0.on == side }
                guard !changes.isEmpty else { continue }
                let count = changes.reduce(0) { $0 + $1.replacements }
                text += " (\(side) body: \(count) replacement\(count == 1 ? "" : "s"))"
            }
            if let note = mapped.note { text += " (\(note))" }
        }
        if let intercept = flow.intercept { text += breakpointNote(intercept) }
        if let intercept = flow.interceptResponse { text += responseBreakpointNote(intercept) }
        // `--verify-signature`'s verdict, which the origin's 200 does not tell: `(signature ok)`,
        // `(signature invalid: stale_timestamp)`.
        if let signature = flow.signature {
            text += signature.valid ? " (signature ok)" : " (signature invalid: \(signature.reason ?? "?"))"
        }
        // A slow flow says why (`--throttle`).
        if let throttle = flow.throttle { text += " (throttled: \(throttle))" }
        if let messages = flow.websocket, !messages.isEmpty {
            text += " (\(messages.count) WebSocket message\(messages.count == 1 ? "" : "s"))"
        }
        return text
    }

    /// What a breakpoint (`--intercept`) did to the request: `(held 2.4 s at a breakpoint; edited
    /// url, body)`, `(aborted at a breakpoint)`, `(not held: its body is over 4 MiB, …)`.
    static func breakpointNote(_ intercept: Flow.Intercept) -> String {
        let held = HumanUnits.duration(milliseconds: intercept.pausedMs)
        switch intercept.outcome {
        case "resumed":
            let edited = intercept.edited.isEmpty ? "" : "; edited " + intercept.edited.joined(separator: ", ")
            return " (held \(held) at a breakpoint\(edited))"
        case "aborted": return " (aborted at a breakpoint)"
        case "answered": return " (held \(held) at a breakpoint, answered there: \(intercept.answeredStatus ?? 0))"
        case "stopped": return " (held at a breakpoint until DevProxy stopped)"
        case "client_gone": return " (the client hung up after \(held) at a breakpoint)"
        default: return intercept.note.map { " (\($0))" } ?? ""
        }
    }

    /// What a breakpoint did to the response, as `breakpointNote` says it of the request:
    /// `(response held 1.2 s at a breakpoint; edited status, body)`, `(response aborted at a
    /// breakpoint)`, `(response not held: an event stream (text/event-stream) goes on as it comes)`.
    static func responseBreakpointNote(_ intercept: Flow.Intercept) -> String {
        let held = HumanUnits.duration(milliseconds: intercept.pausedMs)
        let note = intercept.note.map { "; " + $0 } ?? ""
        switch intercept.outcome {
        case "resumed":
            let edited = intercept.edited.isEmpty ? "" : "; edited " + intercept.edited.joined(separator: ", ")
            return " (response held \(held) at a breakpoint\(edited)\(note))"
        case "aborted": return " (response aborted at a breakpoint)"
        case "stopped": return " (response held at a breakpoint until DevProxy stopped)"
        case "client_gone": return " (the client hung up after \(held) with its response at a breakpoint)"
        default: return intercept.note.map { " (response \($0))" } ?? ""
        }
    }

    /// `HH:mm:ss` of an RFC 3339 timestamp in `timeZone`; `--:--:--` when it does not parse.
    static func clock(_ timestamp: String, timeZone: TimeZone) -> String {
        guard let date = ISO8601.date(timestamp) else { return "--:--:--" }
        let local = Int(date.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: date)
        let secondsOfDay = ((local % 86_400) + 86_400) % 86_400
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60))"
    }
}

/// ANSI colouring that does nothing in `.plain` style.
private struct Paint {
    let style: ConsoleFlowPrinter.Style

    func red(_ text: String) -> String { wrap(text, "31") }
    func dim(_ text: String) -> String { wrap(text, "2") }

    /// The status code, yellow for 4xx and red for 5xx.
    func status(_ code: Int) -> String {
        switch code {
        case 500...: return wrap("\(code)", "31")
        case 400..<500: return wrap("\(code)", "33")
        default: return "\(code)"
        }
    }

    private func wrap(_ text: String, _ code: String) -> String {
        style == .terminal ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }
}
