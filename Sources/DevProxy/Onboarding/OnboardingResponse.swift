/// One answer of the onboarding site: status, headers and the whole body (every resource is small).
public struct OnboardingResponse: Sendable {
    public let status: Int
    public let reason: String
    /// The headers besides framing (`Content-Length`, `Connection`), which the engine adds.
    public let headers: [(String, String)]
    public let body: [UInt8]

    /// Marks every onboarding answer, to the client and in the flow: DevProxy answered it, nothing was forwarded.
    public static let marker = ("X-DevProxy", "answered by DevProxy (onboarding)")

    /// Headers on every answer: no script or plug-in may run (the page has none), nothing is
    /// framed or sniffed, nothing is cached or leaks a referrer.
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'self'; base-uri 'none'; "
            + "form-action 'none'; frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cache-Control", "no-store"),
    ]

    init(status: Int, reason: String, contentType: String, body: [UInt8], extra: [(String, String)] = []) {
        self.status = status
        self.reason = reason
        self.headers = [("Content-Type", contentType)] + extra + Self.securityHeaders + [Self.marker]
        self.body = body
    }

    /// A short text answer for an error (404, 405).
    static func text(_ status: Int, _ reason: String, _ message: String,
                     extra: [(String, String)] = []) -> OnboardingResponse {
        OnboardingResponse(status: status, reason: reason, contentType: "text/plain; charset=utf-8",
                           body: Array((message + "\n").utf8), extra: extra)
    }

    /// The value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
