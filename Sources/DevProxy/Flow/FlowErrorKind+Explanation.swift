extension FlowErrorKind {
    /// What this failure usually means, in a sentence for the person at the console.
    public var explanation: String {
        switch self {
        case .clientRejectedCertificate:
            return "the app pins a key this chain does not contain, or the device does not trust the root"
        case .clientClosedAfterHandshake:
            return "the client accepted the certificate, then hung up: often a pinning check after the handshake"
        case .clientClosedUnused:
            return "the client opened a connection it never used and closed it later (a browser preconnects): not a pinning signal"
        case .clientClosedALPNMismatch:
            return "the client hung up because it did not get the application protocol it asked for (h2): not a pinning signal"
        case .clientReset:
            return "the client cancelled the stream (HTTP/2 RST_STREAM)"
        case .upstreamReset2:
            return "the server reset the HTTP/2 stream (RST_STREAM): an HTTP/2 client got the same code, an HTTP/1.1 client a 502"
        case .protocolMismatch:
            return "the client and the server speak HTTP versions that cannot carry this request"
        case .http2ProtocolError:
            return "a peer broke the HTTP/2 protocol; the proxy closed what it had to"
        case .clientHandshakeFailed:
            return "the client and the proxy found no TLS version or cipher in common"
        case .clientNotTLS:
            return "the client sent something other than TLS after CONNECT"
        case .clientClosed:
            return "the client hung up before the exchange finished"
        case .clientTimeout:
            return "the client went quiet before sending a whole request"
        case .badRequest:
            return "the client's request was malformed"
        case .proxyAuthRequired:
            return "the proxy requires credentials (--proxy-auth) and the client's were missing or wrong"
        case .destinationRefused:
            return "DevProxy did not send it on: a --block-list rule, or a destination that is DevProxy itself "
                + "(its web UI or one of its listeners)"
        case .upstreamRefused:
            return "nothing accepts connections at that address and port"
        case .upstreamUnresolvable:
            return "the host name does not resolve from this machine"
        case .upstreamTimeout:
            return "the server did not answer in time"
        case .upstreamReset:
            return "the server reset the connection"
        case .upstreamTLSFailed:
            return "the TLS handshake with the server failed"
        case .upstreamCertificateInvalid:
            return "the server's certificate does not verify; add its CA with --upstream-ca or use --insecure-upstream"
        case .upstreamClientCertificateRequired:
            // Also the kind of a certificate presented and refused: the flow's message says which.
            return "the server asks for a client certificate (mTLS) and did not take what DevProxy sent"
        case .upstreamBadResponse:
            return "the server's response was malformed"
        case .upstreamClosed:
            return "the server closed the connection before a whole response"
        case .leafRefused:
            return "the intermediate may not sign for this host (outside its name constraints, expired or revoked)"
        case .aborted:
            return "the proxy was stopped while the exchange was in flight"
        case .interceptAborted:
            return "the request was held at a breakpoint and aborted there (web UI, or DevProxy stopping): it was not sent"
        case .offline:
            return "the throttle was Offline: DevProxy failed the request as a device with no network would (nothing "
                + "was sent), or cut it mid-way when Offline was switched on while it ran"
        case .upstreamProxyFailed:
            return "the upstream proxy DevProxy goes through refused the connection or wanted other credentials"
        case .wouldLoop:
            return "the connection was redirected to DevProxy itself; "
                + "exclude DevProxy's own traffic from the redirect rule"
        case .ruleFailed:
            return "a --map-remote or --map-local rule could not answer as written"
        case .overloaded:
            return "the proxy refused it at a limit: its connections, or the HTTP/2 streams one connection may have open"
        }
    }

    /// Whether the flow's own message adds facts (an address, OpenSSL's reason) worth printing
    /// after the explanation.
    var messageAddsDetail: Bool {
        switch self {
        case .upstreamTLSFailed, .upstreamCertificateInvalid, .upstreamBadResponse, .badRequest,
             .clientHandshakeFailed, .leafRefused, .upstreamProxyFailed, .wouldLoop, .proxyAuthRequired,
             .destinationRefused, .clientClosed, .upstreamClosed, .upstreamClientCertificateRequired, .ruleFailed:
            return true
        default:
            return false
        }
    }
}
