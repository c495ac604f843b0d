/// Which application protocol to answer a client in ALPN, decided before its handshake ends
/// from what it offered and what the origin chose (mitmproxy's eager strategy, with translation
/// where the two differ).
///
/// - A client that offers `h2` (with HTTP/2 on): the origin is contacted first, offered the
///   client's own list. The client gets the origin's choice if it offered it (httpx offers
///   `http/1.1,h2` and still gets h2 from an h2 origin), else what it offered (the exchange
///   translates). An origin that cannot be reached: h2 if offered, and each request is answered
///   with the reason.
/// - Otherwise: `http/1.1`, and the origin is contacted as before (eagerly in parallel, or lazily).
struct ProtocolChoice {
    /// What the client's connection may answer, most preferred first.
    let preference: ALPNPreference
    /// The origin connection opened to learn its protocol, or why it could not be opened; nil when
    /// none was opened.
    let upstream: Result<UpstreamConnection, any Error>?

    /// The protocols DevProxy can serve.
    static let served: Set<String> = ["h2", "http/1.1"]

    /// Decides for a client that offered `offered`; `connect` opens the origin offering a list.
    static func decide(offered: [String], http2: Bool,
                       connect: ([String]) -> Result<UpstreamConnection, any Error>) -> ProtocolChoice {
        guard http2, offered.contains("h2") else { return ProtocolChoice(preference: .http11, upstream: nil) }
        let offer = offered.filter { served.contains($0) }
        let upstream = connect(offer)
        let originChose: String? = switch upstream {
        case .success(let connection): connection.isHTTP2 ? "h2" : "http/1.1"
        case .failure: nil
        }
        return ProtocolChoice(preference: originChose == "http/1.1" ? preferHTTP11 : preferH2, upstream: upstream)
    }

    static let preferH2 = ALPNPreference(["h2", "http/1.1"])
    static let preferHTTP11 = ALPNPreference(["http/1.1", "h2"])
}
