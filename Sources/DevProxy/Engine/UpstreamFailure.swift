/// How a failure to reach an origin is recorded and answered, whatever HTTP version the client
/// speaks.
enum UpstreamFailure {
    /// The flow's error kind, the status the client gets (502, or 504 for a timeout) and the
    /// one-line reason, for an error thrown while connecting to `target` (`HostPort`'s text: an
    /// IPv6 host in brackets, where `::1:1` read as one address).
    static func describe(_ error: (any Error)?, target: String) -> (FlowErrorKind, Int, String) {
        switch error {
        case let error as DialAbandoned:
            return (error.stopping ? .aborted : .clientClosed, 502, error.description)
        case let error as RedirectedBack:
            return (.wouldLoop, 502, error.description)
        case let error as NetworkError where error.kind == .forbidden:
            return (.destinationRefused, 403, error.message)
        case let error as NetworkError:
            let (kind, status): (FlowErrorKind, Int) = switch error.kind {
            case .refused: (.upstreamRefused, 502)
            case .unresolvable: (.upstreamUnresolvable, 502)
            case .timedOut: (.upstreamTimeout, 504)
            case .reset, .closed: (.upstreamReset, 502)
            case .failed, .forbidden: (.upstreamRefused, 502)
            }
            return (kind, status, "cannot connect to upstream \(target): \(error.message)")
        case let error as UpstreamProxyFailure:
            return (.upstreamProxyFailed, error.timedOut ? 504 : 502, error.message)
        case let error as TLSError where error.kind == .clientCertificateRequired:
            return (.upstreamClientCertificateRequired, 502, error.message)
        case let error as TLSError where error.kind == .verifyFailed:
            return (.upstreamCertificateInvalid, 502, "upstream \(error.message)")
        case let error as TLSError:
            let timedOut = error.kind == .timedOut
            return (timedOut ? .upstreamTimeout : .upstreamTLSFailed, timedOut ? 504 : 502,
                    "TLS to upstream \(target) failed: \(error.message)")
        case let error?:
            return (.upstreamRefused, 502, "\(error)")
        case nil:
            return (.upstreamRefused, 502, "cannot connect to upstream \(target)")
        }
    }

    /// What a failed dial still tells the flow: for an origin whose certificate did not verify,
    /// the chain it sent and why it failed (`tls.upstream`), the address dialled and the connect
    /// and TLS times, where the flow had the error alone (the first question after
    /// `upstream_certificate_invalid` is which certificate the origin sent).
    static func annotate(_ draft: inout FlowDraft, with error: (any Error)?) {
        guard let failed = (error as? TLSError)?.failedUpstream else { return }
        if let address = failed.address { draft.flow.server.address = address }
        draft.flow.timings.connect = failed.connectMilliseconds
        draft.flow.timings.tls = failed.tlsMilliseconds
        let upstream = Flow.TLSInfo.UpstreamSide(version: nil, cipher: nil, alpn: nil, verified: false,
                                                 verifyError: failed.verifyError,
                                                 chain: failed.chain.map(Flow.ChainCertificate.init))
        draft.flow.tls = Flow.TLSInfo(client: draft.flow.tls?.client, upstream: upstream)
    }

    /// For a failure on an established connection: the origin had asked for a client certificate,
    /// got none, and failed the connection (TLS 1.3 sends its `certificate_required` alert after
    /// the handshake, on the first read). Nil when the failure is not that.
    static func missingClientCertificate(_ upstream: UpstreamConnection, target: String) -> String? {
        guard upstream.tls?.clientCertificateMissing == true else { return nil }
        let host = target.split(separator: ":").first.map(String.init) ?? target
        return "\(target) requires a client certificate and none is configured for it: give one with "
            + "--client-cert \(host)=FILE (PEM or .p12)"
    }

    /// For an origin that cut its connection before the first response, on a connection that
    /// presented a client certificate: TLS 1.3 checks the certificate after the handshake, and an
    /// origin that refuses it sends an alert (unknown_ca, bad_certificate, certificate_expired)
    /// and closes, which DevProxy often meets as a failed write with the alert unread. Said so, with
    /// the file, where the flow read only "closed the connection while we were writing". Nil
    /// otherwise (no certificate presented, a connection that had answered before).
    static func refusedClientCertificate(_ upstream: UpstreamConnection, target: String, error: Error) -> String? {
        let cut = (error as? NetworkError).map { $0.kind == .reset || $0.kind == .closed }
            ?? (error is TLSError || error is UpstreamClosed)
        guard cut, !upstream.reused else { return nil }
        return refusedClientCertificate(upstream, target: target, cause: "\(error)")
    }

    /// `refusedClientCertificate(_:target:error:)` for a connection the caller knows was cut
    /// before its first answer; `cause` is what the cut read as.
    static func refusedClientCertificate(_ upstream: UpstreamConnection, target: String, cause: String) -> String? {
        guard let identity = upstream.tls?.clientIdentity else { return nil }
        return "\(target) ended the connection before answering, after DevProxy presented the client certificate from "
            + "\(identity.path) (\(identity.certificate.subject)): an origin that does not accept it (not from its CA, "
            + "expired) does that, or alerts unknown_ca or bad_certificate (\(cause))"
    }
}
