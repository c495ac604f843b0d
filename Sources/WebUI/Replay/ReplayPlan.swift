/// The request a replay sends through the proxy: method, URL (where the connection goes),
/// headers and body, the `Host` to send in place of the URL's, and whether to offer h2 first.
struct ReplayPlan: Sendable {
    let method: String
    let url: String
    let headers: [(String, String)]
    let body: [UInt8]
    /// A Host other than the URL's authority (`ReplayTarget.host`); nil for the URL's.
    let host: String?
    /// The replayed flow went over HTTP/2: the origin is offered h2 first.
    let http2: Bool
}
