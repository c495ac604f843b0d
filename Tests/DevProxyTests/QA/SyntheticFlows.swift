import DevProxy
import Foundation

/// Flow records built from JSON, as the engine's log writes them.
enum SyntheticFlows {
    /// One flow's JSON object.
    static func object(id: String, host: String, persona: String?, method: String? = "GET", url: String? = nil,
                       body: String? = nil, error: String? = nil, mode: String = "https") -> [String: Any] {
        var flow: [String: Any] = [
            "id": id, "started": "2026-05-01T10:00:00.000Z", "ended": "2026-05-01T10:00:00.100Z",
            "client": "127.0.0.1:50000", "mode": mode, "server": ["host": host, "port": 443],
            "timings": ["connect": -1, "tls": -1, "send": -1, "wait": -1, "receive": -1],
        ]
        if let persona { flow["persona"] = persona }
        if let method {
            var request: [String: Any] = ["method": method, "url": url ?? "https://\(host)/", "http_version": "HTTP/1.1",
                                          "headers": [["Host", host]]]
            if let body { request["body"] = ["size": body.utf8.count, "sha256": "00", "text": body, "truncated": false] }
            flow["request"] = request
            flow["response"] = ["status": 200, "reason": "OK", "http_version": "HTTP/1.1", "headers": [[String]]()]
        }
        if let error { flow["error"] = ["kind": error, "message": error] }
        return flow
    }

    static func flow(id: String, host: String, persona: String?, method: String? = "GET", url: String? = nil,
                     body: String? = nil, error: String? = nil, mode: String = "https") throws -> Flow {
        let data = try JSONSerialization.data(withJSONObject: object(id: id, host: host, persona: persona, method: method,
                                                                     url: url, body: body, error: error, mode: mode))
        return try JSONDecoder().decode(Flow.self, from: data)
    }

    /// JSON Lines of the given flow objects.
    static func log(_ objects: [[String: Any]]) throws -> String {
        try objects.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) }
            .joined(separator: "\n") + "\n"
    }

    /// A TrustKit report body for `host` with `chain` (PEM strings).
    static func trustKitReport(host: String, chain: [String], result: Int = 1, enforce: Bool = false) throws -> String {
        let report: [String: Any] = [
            "app-bundle-id": "dev.acme.app", "app-version": "1.0", "app-platform": "IOS", "app-platform-version": "17.4.0",
            "app-vendor-id": "5E1D0B0E-0000-4000-8000-000000000000", "trustkit-version": "3.0.0",
            "date-time": "2026-05-01T10:00:00Z", "hostname": host, "port": 0, "noted-hostname": host,
            "include-subdomains": false, "enforce-pinning": enforce, "validated-certificate-chain": chain,
            "known-pins": ["pin-sha256=\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\""], "validation-result": result,
            "known-pins-expiration-date": NSNull(),
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: report), as: UTF8.self)
    }
}
