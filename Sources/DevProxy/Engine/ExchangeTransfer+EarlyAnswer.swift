import Foundation
import HTTP1
import HTTPTypes
#if canImport(Glibc)
import Glibc
#endif

/// An origin that answers before the request body is in (a 413 for an upload too large, a 401
/// for one without credentials): HTTP/1.1 is not full duplex, and DevProxy sent the whole body
/// before it read any response, so the client saw the answer only once the upload ended or the
/// origin closed the connection. Now the upload watches the origin between two parts of the body;
/// an answer that came goes to the client at once, and the rest of the body goes on or stops as
/// the answer says (RFC 9110 §10.1.1: the server says whether it will close or read on; RFC 9112
/// §9.6: a client that sees the server closing stops sending).
extension ExchangeTransfer {
    /// Before the next part of the request body: whether the origin has already answered with a
    /// final response that goes to the client now (`relaysEarly`). Interim responses that came are
    /// relayed and recorded, and the body goes on. A `2xx` on a connection the origin keeps is held
    /// until the body is in, as before (an origin that streams its answer while it reads needs the
    /// rest of the body to finish it); any other early answer, or one that closes, goes first.
    mutating func originAnsweredEarly(draft: inout FlowDraft) throws -> Bool {
        guard originSpeaksFirst() else { return false }
        repeat {
            switch try leg.next() {
            case .interim(let interim):
                // A `100` now says nothing the body does not already know.
                if interim.response.status != 100 { relayInterim(interim, draft: &draft) }
            case .final(let final):
                earlyFinal = final
            case .body, .end:
                // Only after a final head, which ends the loop.
                continue
            }
        } while earlyFinal == nil && leg.responseArrived()
        guard let earlyFinal else { return false }
        relaysEarly = earlyFinal.response.status >= 300 || earlyFinal.http1?.keepAlive == false
        return relaysEarly
    }

    /// Waits until the client has more of its body or the origin has begun to answer (or closed),
    /// whichever comes first; true for the origin. Bytes already buffered on either side count
    /// first; the client's close, a failure or the client's timeout is left to the read that follows.
    private mutating func originSpeaksFirst() -> Bool {
        if leg.responseArrived() { return true }
        if context.client.stream.inputReady || (try? context.client.hasBufferedInput()) != false { return false }
        let client = context.client.stream.socket
        var pollers = [pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: leg.upstream.stream.socket.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&pollers, 2, Socket.pollMilliseconds(client.timeout))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, pollers[0].revents == 0 else { return false }
            return leg.responseArrived()
        }
    }

    /// Relays an interim response (not `100 Continue`, which is DevProxy's to send) and records it.
    mutating func relayInterim(_ interim: UpstreamResponseHead, draft: inout FlowDraft) {
        draft.recordInformational(interim.response, redact: context.configuration.redactHeaders)
        // RFC 9110 §15.2: no 1xx to an HTTP/1.0 client, which reads it as the response.
        guard head.version != .http10 else { return }
        context.sendToClient(HTTP1Serializer.serialize(interim.asHTTP1))
    }

    /// After an early answer went to the client: an origin that keeps its connection reads the
    /// rest of the body (RFC 9110 §10.1.1), which goes on; one that closes it gets no more, and the
    /// flow says how much it got (`request.body_cut`). Finishes the request body's record.
    /// - Parameter upstreamKept: the answer left the origin's connection open (no `Connection:
    ///   close`, framed by its length) and whole.
    /// - Returns: whether the whole body went up.
    mutating func finishEarlyAnswer(_ final: UpstreamResponseHead, upstreamKept: Bool, draft: inout FlowDraft) -> Bool {
        let status = final.response.status
        let reason: String
        if upstreamKept {
            do {
                if try sendRequestBodyUntilCut(draft: &draft) == nil {
                    recorder.finishRequestBody(into: &draft)
                    return true
                }
                reason = "the origin answered \(status) before the request body was in, then closed the connection"
            } catch {
                // A client that sees an early error stops sending and closes (curl: "HTTP error
                // before end of send, stop sending").
                reason = "the origin answered \(status) before the request body was in, and the client stopped sending it"
            }
        } else if final.http1?.keepAlive == false {
            reason = EarlyAnswerCut.closing(status)
        } else {
            reason = "the origin answered \(status) before the request body was in, and its connection could not carry the rest"
        }
        draft.flow.request?.bodyCut = Flow.BodyCut(sent: bodyBytesSent, reason: reason)
        recorder.finishRequestBody(into: &draft, decoding: false)
        return false
    }
}

/// Why a request body stopped going to the origin (`request.body_cut.reason`), in the same words
/// whichever client leg (HTTP/1.1 or HTTP/2) carried the upload to an HTTP/1.1 origin.
enum EarlyAnswerCut {
    /// The origin answered before the body was in and said it closes the connection.
    static func closing(_ status: Int) -> String {
        "the origin answered \(status) before the request body was in, and closes the connection (Connection: close; RFC 9112 §9.6)"
    }

    /// A write failed because the origin had closed the connection; it had answered.
    static func closed(_ status: Int) -> String {
        "the origin answered \(status) and closed the connection before the request body was in"
    }

    /// The origin answered with an error on a connection it keeps: an HTTP/2 client's upload stops
    /// there, and its stream is told to stop (RFC 9113 §8.1).
    static func stopped(_ status: Int) -> String {
        "the origin answered \(status) before the request body was in, and the client was told to stop sending it "
            + "(RST_STREAM NO_ERROR; RFC 9113 §8.1)"
    }
}
