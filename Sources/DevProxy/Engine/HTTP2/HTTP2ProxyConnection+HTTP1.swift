import Foundation
import HTTP1
import HTTP2
import HTTPTypes

/// Streams of an h2-only client whose origin speaks only HTTP/1.1: each request goes out on a
/// thread of its own (`HTTP1StreamLeg`), translated (RFC 9113 §8.2.3 cookies joined, `Host` from
/// `:authority`, chunked when the length is unknown), and the response comes back as h2.
extension HTTP2ProxyConnection {
    /// Starts the HTTP/1.1 half of `exchange`, to this connection's origin or to `destination`
    /// (`--map-remote`'s).
    func startHTTP1Leg(_ exchange: HTTP2StreamExchange, head: HTTP2HeaderBlock, endStream: Bool,
                       to destination: Destination? = nil) {
        var neutral = HTTPRequest(head)
        neutral.authority = destination?.hostHeader ?? originAuthority ?? neutral.authority
            ?? URIHost.authority(host: host, port: port == 443 ? nil : port)
        var request: HTTPRequestHead
        do {
            request = try HTTPRequestHead(forwarding: neutral)
        } catch {
            answer(exchange, status: 400, kind: .badRequest, message: "\(error)")
            return
        }
        MaxForwards.forward(&request.headers, method: request.method)
        // Each leg is a thread and an origin connection: as many at once as DevProxy takes
        // connections, and a stream past that may go again later (RFC 9113 §8.7).
        guard server.reserveStreamLeg() else {
            exchange.draft.fail(.overloaded, "refused with REFUSED_STREAM: DevProxy had \(context.configuration.maxConnections) "
                                + "HTTP/1.1 requests of HTTP/2 streams in flight, the most it runs at once (each takes a "
                                + "thread and a connection to the origin); nothing of it was forwarded, and the client may "
                                + "send it again (RFC 9113 §8.7)")
            exchange.draft.flow.error?.code = HTTP2ErrorCode.refusedStream.description
            exchange.draft.flow.error?.by = "proxy"
            try? session.resetStream(exchange.clientStream, code: .refusedStream)
            return
        }
        let leg = HTTP1StreamLeg(wake: wake)
        exchange.http1Leg = leg
        if endStream {
            leg.finishRequest()
            exchange.requestSent = Date()
        }
        HTTP1StreamExchange(server: server, connection: context.connection, leg: leg, host: destination?.host ?? host,
                            port: destination?.port ?? port, dial: destination == nil ? dial : nil, head: request,
                            hasBody: !endStream, tls: destination?.tls ?? true).start()
    }

    /// Applies what the streams' HTTP/1.1 threads reported.
    func pumpHTTP1Legs() {
        for exchange in Array(streams.values) {
            guard let leg = exchange.http1Leg else { continue }
            for report in leg.takeReports() { apply(report, to: exchange) }
        }
    }

    private func apply(_ report: HTTP1StreamLeg.Report, to exchange: HTTP2StreamExchange) {
        let stream = exchange.clientStream
        switch report {
        case .connected(let upstream):
            exchange.draft.flow.server.address = upstream.address
            // Not `flowTLS(over:)`: the connection is the leg thread's (and then the pool's), so
            // this thread reads only what the leg worked out before it reported.
            if let tls = upstream.tlsInfo { exchange.draft.flow.tls = Flow.TLSInfo(client: exchange.draft.flow.tls?.client, upstream: tls) }
            exchange.draft.flow.timings.connect = upstream.reused ? 0 : upstream.connectMilliseconds
            exchange.draft.flow.timings.tls = upstream.reused ? -1 : upstream.tlsMilliseconds
        case .retrying:
            exchange.draft.flow.server.retried = true
        case .consumed(let count):
            // The connection part was acknowledged as the bytes arrived (clientData).
            try? session.consumeStream(stream, count: count)
            if exchange.requestEnded && exchange.requestSent == nil { exchange.requestSent = Date() }
        case .interim(let response):
            exchange.draft.recordInformational(response, redact: context.configuration.redactHeaders)
            let block = (try? HTTP2HeaderBlock(forwarding: response)) ?? .response(status: response.status)
            try? session.submitResponse(stream: stream, block, endStream: false)
        case .bodyCut(let cut):
            exchange.draft.flow.request?.bodyCut = cut
        case .head(let origin, let version):
            let response = modifyingHeaders(of: origin, exchange: exchange)
            var block = (try? HTTP2HeaderBlock(forwarding: response)) ?? .response(status: response.status)
            exchange.recordResponseHead(block, HTTPResponse(block))
            if exchange.requestSent == nil { exchange.requestSent = Date() }
            exchange.draft.flow.response = Flow.Response(response, httpVersion: version,
                                                         redact: context.configuration.redactHeaders)
            if let removed = context.filterAltSvc(&block.fields) { exchange.draft.flow.response?.altSvcRemoved = removed }
            server.responded(exchange.draft.flow)
            // A response without content (RFC 9110 §6.4.1) ends with its HEADERS: a `content-length`
            // it carries (a 304's, a HEAD's) then binds no DATA, where an empty DATA frame after it
            // is a length mismatch to a strict client (Python h2 failed the connection).
            let noContent = response.status == 204 || response.status == 304 || exchange.requestHead.method == "HEAD"
            if noContent { exchange.responseEnded = true }
            // --modify-body, a breakpoint: held until its body is whole (bounded), then edited, or
            // decided in the web UI, and sent.
            if holdsResponse(exchange, head: block, endStream: noContent) { return }
            try? session.submitResponse(stream: stream, block, endStream: noContent)
        case .body(let bytes):
            if exchange.heldPinSet != nil {
                if exchange.responseBreakpoint != nil {
                    gatherResponse(exchange, bytes, endStream: false)
                    return
                }
                exchange.heldPinSet?.body += bytes
                if let held = exchange.heldPinSet, held.body.count > bodyHoldLimit(exchange) {
                    releaseHeld(exchange, whole: false, endStream: false)
                }
                return
            }
            exchange.recordResponse(bytes)
            try? session.submitData(stream: stream, bytes, endStream: false)
        case .overran(let count, let length):
            exchange.draft.fail(.upstreamBadResponse, UpstreamOverrun.reason(count, target: HostPort(host: host, port: port).description,
                                                                             length: length))
            exchange.draft.flow.error?.by = "server"
        case .end(let trailers):
            // The flow keeps the origin's trailers; the client gets those that may cross.
            let fields = trailers.isEmpty ? [] : (try? [HTTP2Field](forwardingTrailers: trailers)) ?? []
            if endsResponseAtBreakpoint(exchange, trailers: trailers, relayed: fields) { return }
            if !trailers.isEmpty { exchange.recorder.recordResponseTrailers(trailers) }
            if exchange.heldPinSet != nil { releaseHeld(exchange, whole: true, endStream: false) }
            if exchange.responseEnded {
                // Its HEADERS ended the stream (no content).
            } else if fields.isEmpty {
                try? session.submitData(stream: stream, [], endStream: true)
            } else {
                try? session.submitTrailers(stream: stream, fields)
            }
            if !exchange.requestEnded {
                // The origin answered before the whole request body (and the thread stopped sending
                // it): the client is told to stop too, once the answer has reached it (RFC 9113 §8.1).
                exchange.http1Leg = nil
                resetClientAfterQueuedFrames(exchange, code: .noError)
            }
        case .failed(let kind, let status, let message, let responseStarted):
            exchange.http1Leg = nil
            responseFailedAtBreakpoint(exchange)
            if responseStarted {
                exchange.draft.fail(kind, "\(message) after \(exchange.responseBytes) response bytes")
                exchange.draft.flow.error?.by = "server"
                resetClientAfterQueuedFrames(exchange, code: .internalError)
            } else {
                answer(exchange, status: status, kind: kind, message: message)
            }
        }
    }
}
