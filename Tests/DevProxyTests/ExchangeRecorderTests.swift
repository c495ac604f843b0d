import Foundation
import HTTPTypes
import Testing
@testable import DevProxy

/// The one recorder both versions' exchanges feed: bodies decoded by the recorded heads, trailers
/// redacted as headers are, a gRPC view only where asked for, and timings only from marks set.
@Suite struct ExchangeRecorderTests {
    private func draft() -> FlowDraft {
        var draft = FlowDraft(client: "127.0.0.1:1", mode: .https, host: "x.test", port: 443)
        draft.flow.request = Flow.Request(HTTPRequest(method: "POST"), url: "https://x.test/", httpVersion: "HTTP/2",
                                          redact: [])
        return draft
    }

    /// A head's fields reach its flow as they are, sharing the head's storage, unless a name is
    /// redacted: then every redacted value (and always `Proxy-Authorization`'s) is masked, in
    /// any letter case, and the head itself keeps its values.
    @Test func headFieldsReachTheFlowSharedOrWithRedactedValuesMasked() throws {
        let fields: HTTPFields = ["user-agent": "app/1", "authorization": "Bearer secret", "accept": "*/*"]
        let shared = FlowDraft.headerPairs(fields, redact: [])
        #expect(shared == fields.fieldPairs)
        #expect(shared == [["user-agent", "app/1"], ["authorization", "Bearer secret"], ["accept", "*/*"]])
        let masked = FlowDraft.headerPairs(fields, redact: ["Authorization"])
        #expect(masked == [["user-agent", "app/1"], ["authorization", "<redacted>"], ["accept", "*/*"]])
        #expect(fields["authorization"] == "Bearer secret", "the head keeps its value")
        let proxy: HTTPFields = ["proxy-authorization": "Basic dXNlcjpwYXNz", "x-other": "1"]
        #expect(FlowDraft.headerPairs(proxy, redact: []) == [["proxy-authorization", "<redacted>"], ["x-other", "1"]])
        var request = HTTPRequest(method: "GET", fields: fields)
        request.fields.append(name: "x-added", value: "2")
        let flow = Flow.Request(request, url: "https://x.test/", httpVersion: "HTTP/2", redact: ["AUTHORIZATION"])
        #expect(flow.headers.first(named: "authorization") == "<redacted>")
        #expect(flow.headers.first(named: "x-added") == "2")
    }

    @Test func bodiesAreDecodedByTheRecordedHeadsCodings() throws {
        let text = Array("hello recorder\n".utf8)
        let request = HTTPRequest(method: "POST", fields: ["Content-Encoding": "gzip", "Content-Type": "text/plain"])
        let recorder = ExchangeRecorder(request: request, bodyLimit: 1024, grpcView: false)
        recorder.recordRequestBody(try RealCompressors.gzip(text))
        recorder.recordResponseHead(HTTPResponse(status: 200, fields: ["content-type": "text/plain"]))
        recorder.recordResponseBody(text)
        var draft = draft()
        draft.flow.response = Flow.Response(HTTPResponse(status: 200), httpVersion: "HTTP/2", redact: [])
        recorder.finish(into: &draft, redact: [])
        #expect(draft.flow.request?.body?.text == "hello recorder\n")
        #expect(draft.flow.request?.body?.decoded == "gzip")
        #expect(draft.flow.response?.body?.text == "hello recorder\n")
        #expect(draft.flow.response?.body?.decoded == nil)
        #expect(recorder.responseBytes == text.count)
    }

    @Test func aBodyCutShortIsKeptUndecodedWhenAsked() throws {
        let request = HTTPRequest(method: "POST", fields: ["Content-Encoding": "gzip", "Content-Type": "text/plain"])
        let recorder = ExchangeRecorder(request: request, bodyLimit: 1024, grpcView: false)
        recorder.recordRequestBody(Array(try RealCompressors.gzip(Array("abc".utf8)).prefix(5)))
        var draft = draft()
        recorder.finishRequestBody(into: &draft, decoding: false)
        #expect(draft.flow.request?.body?.decoded == nil)
        #expect(draft.flow.request?.body?.size == 5)
    }

    @Test func trailersAreRedactedAndResponseTrailersNeedAResponse() {
        let recorder = ExchangeRecorder(request: HTTPRequest(method: "POST"), bodyLimit: 0, grpcView: false)
        recorder.recordRequestTrailers(["x-token": "secret", "x-sum": "1"])
        recorder.recordResponseTrailers(["grpc-status": "0"])
        var draft = draft()
        recorder.finishTrailers(into: &draft, redact: ["X-Token"])
        #expect(draft.flow.request?.trailers == [["x-token", "<redacted>"], ["x-sum", "1"]])
        #expect(draft.flow.response == nil)
        draft.flow.response = Flow.Response(HTTPResponse(status: 200), httpVersion: "HTTP/2", redact: [])
        recorder.finishTrailers(into: &draft, redact: [])
        #expect(draft.flow.response?.trailers == [["grpc-status", "0"]])
    }

    @Test func theGRPCViewIsRecordedOnlyWhereAskedFor() {
        let request = HTTPRequest(method: "POST", scheme: "https", authority: "x.test", path: "/echo.Echo/Say",
                                  fields: ["content-type": "application/grpc"])
        for asked in [false, true] {
            let recorder = ExchangeRecorder(request: request, bodyLimit: 1024, grpcView: asked)
            recorder.recordResponseHead(HTTPResponse(status: 200, fields: ["content-type": "application/grpc"]))
            recorder.recordResponseTrailers(["grpc-status": "5", "grpc-message": "not%20found"])
            var draft = draft()
            draft.flow.response = Flow.Response(HTTPResponse(status: 200), httpVersion: "HTTP/2", redact: [])
            recorder.finish(into: &draft, redact: [])
            #expect(recorder.isGRPC == asked)
            #expect((draft.flow.grpc != nil) == asked)
            if asked {
                #expect(draft.flow.grpc?.service == "echo.Echo")
                #expect(draft.flow.grpc?.status == 5)
                #expect(draft.flow.grpc?.message == "not found")
            }
        }
    }

    @Test func timingsComeOnlyFromTheMarksSet() {
        let start = Date(timeIntervalSinceNow: -1)
        let recorder = ExchangeRecorder(request: HTTPRequest(method: "GET"), bodyLimit: 0, grpcView: false,
                                        started: start)
        var draft = draft()
        recorder.finishTimings(into: &draft)
        #expect(draft.flow.timings == .none)
        recorder.requestSent = start.addingTimeInterval(0.25)
        recorder.finishTimings(into: &draft, openEnded: false)
        #expect(draft.flow.timings.send == 250)
        #expect(draft.flow.timings.wait == -1 && draft.flow.timings.receive == -1)
        recorder.finishTimings(into: &draft)
        #expect(draft.flow.timings.wait >= 750)
        recorder.responseStarted = start.addingTimeInterval(0.5)
        recorder.finishTimings(into: &draft)
        #expect(draft.flow.timings.wait == 250)
        #expect(draft.flow.timings.receive >= 500)
    }

    /// A response that began before the request ended (a bidirectional call) has no wait, and
    /// its receive counts from the request's end: the wait was negative (-999 ms in a bidi gRPC
    /// call) and the phases added up to twice the exchange.
    @Test func aResponseThatOverlapsTheRequestWaitsNothing() {
        let start = Date(timeIntervalSinceNow: -1)
        let recorder = ExchangeRecorder(request: HTTPRequest(method: "POST"), bodyLimit: 0, grpcView: false, started: start)
        var draft = draft()
        recorder.responseStarted = start.addingTimeInterval(0.1)
        recorder.requestSent = start.addingTimeInterval(0.6)
        recorder.finishTimings(into: &draft)
        #expect(draft.flow.timings.send == 600)
        #expect(draft.flow.timings.wait == 0)
        #expect(draft.flow.timings.receive >= 400 && draft.flow.timings.receive < 1_000, "\(draft.flow.timings)")
    }
}
