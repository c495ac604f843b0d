import Foundation

/// The figures of one run, as printed in text or as one JSON object for `bench/run`.
struct LoadReport {
    let options: LoadOptions
    let stats: RunStats
    /// Length of the measured window in seconds (after warm-up).
    let measuredSeconds: Double
    /// Generator CPU during the measured window.
    let cpu: ProcessCPU

    private func milliseconds(_ nanoseconds: UInt64) -> Double { Double(nanoseconds) / 1e6 }
    private func rounded(_ value: Double, _ places: Double = 1000) -> Double { (value * places).rounded() / places }

    /// Requests per second over the measured window.
    var requestsPerSecond: Double { measuredSeconds > 0 ? Double(stats.requests) / measuredSeconds : 0 }

    /// Stream throughput in MB/s (10^6 bytes): body bytes over the mean per-stream transfer time;
    /// for other modes, body bytes over the window.
    var megabytesPerSecond: Double {
        if options.mode == .stream {
            let streams = max(1, stats.streamsCompleted + (stats.errors[.timeout] ?? 0))
            let seconds = Double(stats.streamNanoseconds) / 1e9 / Double(streams)
            return seconds > 0 ? Double(stats.bodyBytes) / 1e6 / seconds : 0
        }
        return measuredSeconds > 0 ? Double(stats.bodyBytes) / 1e6 / measuredSeconds : 0
    }

    /// Share of one core the generator used, in percent.
    var cpuPercent: Double {
        measuredSeconds > 0 ? (cpu.userSeconds + cpu.systemSeconds) / measuredSeconds * 100 : 0
    }

    /// One JSON object; keys sorted so diffs between runs stay readable.
    func json() -> String {
        var errors: [String: Any] = [:]
        for kind in ErrorKind.allCases { errors[kind.rawValue] = stats.errors[kind] ?? 0 }
        var statuses: [String: Any] = [:]
        for (code, n) in stats.statuses { statuses[String(code)] = n }
        let latency = stats.latency
        var object: [String: Any] = [
            "mode": options.mode.rawValue,
            "connections": options.connections,
            "threads": options.threads,
            "measured_s": rounded(measuredSeconds),
            "warmup_s": options.effectiveWarmup,
            "requests": stats.requests,
            "req_per_s": rounded(requestsPerSecond, 10),
            "latency_ms": [
                "p50": rounded(milliseconds(latency.value(atQuantile: 0.50))),
                "p90": rounded(milliseconds(latency.value(atQuantile: 0.90))),
                "p99": rounded(milliseconds(latency.value(atQuantile: 0.99))),
                "max": rounded(milliseconds(latency.maximum)),
                "mean": rounded(latency.mean / 1e6),
            ],
            "bytes": stats.bodyBytes,
            "mb_per_s": rounded(megabytesPerSecond, 10),
            "errors": errors,
            "errors_total": stats.errors.values.reduce(0, +),
            "statuses": statuses,
            "cpu_user_s": rounded(cpu.userSeconds),
            "cpu_sys_s": rounded(cpu.systemSeconds),
            "cpu_percent": rounded(cpuPercent, 10),
        ]
        if options.mode == .stream {
            object["ttfb_ms"] = rounded(milliseconds(stats.timeToFirstByte.value(atQuantile: 0.5)))
            object["streams_completed"] = stats.streamsCompleted
        }
        if options.mode == .idle || options.mode == .stall { object["established"] = stats.established }
        object["http_version"] = options.http2 ? "HTTP/2" : "HTTP/1.1"
        if options.http2 { object["streams_per_connection"] = options.streams }
        if let first = stats.firstError { object["first_error"] = first.description }
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Human-readable summary, a few lines.
    func text() -> String {
        let latency = stats.latency
        func ms(_ q: Double) -> String { String(format: "%.3f", milliseconds(latency.value(atQuantile: q))) }
        var lines: [String] = []
        let via = options.proxy.map { " via proxy \($0)" } ?? ""
        let version = options.http2 ? " over HTTP/2, \(options.streams) stream(s) each," : ""
        lines.append("\(options.mode.rawValue): \(options.connections) connection(s)\(version) "
            + "on \(options.threads) thread(s)\(via), "
            + String(format: "%.1f s measured after %.1f s warm-up", measuredSeconds, options.effectiveWarmup))
        switch options.mode {
        case .stream:
            lines.append(String(format: "streamed %llu bytes at %.1f MB/s, time to first byte %.3f ms, %llu stream(s) completed",
                                stats.bodyBytes, megabytesPerSecond,
                                milliseconds(stats.timeToFirstByte.value(atQuantile: 0.5)), stats.streamsCompleted))
        case .idle:
            lines.append("established and held \(stats.established) of \(options.connections) connection(s)")
        case .stall:
            lines.append("held \(stats.established) of \(options.concurrency) stream(s) with their response head in "
                + "and no window granted")
        case .keepalive, .newconn:
            lines.append(String(format: "requests %llu, %.1f req/s", stats.requests, requestsPerSecond))
            lines.append("latency ms: p50 \(ms(0.5))  p90 \(ms(0.9))  p99 \(ms(0.99))  max "
                + String(format: "%.3f", milliseconds(latency.maximum)))
        }
        let errorText = ErrorKind.allCases.map { "\($0.rawValue) \(stats.errors[$0] ?? 0)" }.joined(separator: ", ")
        lines.append("errors: \(errorText)")
        if let first = stats.firstError { lines.append("first error: \(first)") }
        lines.append(String(format: "generator CPU: user %.2f s, sys %.2f s (%.0f %% of one core)",
                            cpu.userSeconds, cpu.systemSeconds, cpuPercent))
        return lines.joined(separator: "\n")
    }
}
