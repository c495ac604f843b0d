@testable import DevProxy
import Foundation
import HTTPTypes
import Testing

/// A `Flow` keeps its fields in one shared box (`Flow.Storage`) and copies it on the first write
/// to a shared one (its accessors' `makeUnique`, with the copy out of line): a copy is a value,
/// never changed by writes to the flow it came from, through any accessor, nested or not.
@Suite struct FlowValueSemanticsTests {
    @Test func writesThroughEveryKindOfAccessorLeaveCopiesAlone() throws {
        let original = FlowJSONWriterTests.everything
        let before = original.jsonBytes
        var changed = original
        changed.id = "changed"
        changed.request?.body = .empty
        changed.request?.headers.append(name: "X-Added", value: "1")
        changed.response?.status = 599
        changed.response?.trailers = [["grpc-status", "13"]]
        changed.tls?.client?.sni = "other.test"
        changed.h2 = Flow.HTTP2Info(streamID: 99, connectionID: "c-other")
        changed.server.port = 1
        changed.error = Flow.FlowError(kind: "aborted", message: "cut", alert: nil)
        #expect(original.jsonBytes == before, "the original is as it was")
        #expect(original == FlowJSONWriterTests.everything)
        #expect(changed.id == "changed" && original.id != "changed")
        #expect(changed.request?.headers.last == ["X-Added", "1"])
        #expect(original.request?.headers.contains(["X-Added", "1"]) == false)
        #expect(changed.response?.status == 599 && original.response?.status != 599)
        #expect(changed.tls?.client?.sni == "other.test" && original.tls?.client?.sni != "other.test")

        // A flow no other copy shares is written in place, and stays equal to what it reads.
        var alone = changed
        changed = original
        alone.response?.reason = "Alone"
        #expect(alone.response?.reason == "Alone" && alone.response?.status == 599)
        #expect(changed == original)
    }

    /// `Flow.TLSInfo` is one immutable box the flows of a connection share: a write through it
    /// makes a new box and leaves every copy alone; equal parts in two boxes are equal; the JSON
    /// and `Codable` forms are what the two plain optional fields gave (absent sides left out).
    @Test func tlsInfoIsAValueWhoseCopiesShareOneBox() throws {
        let client = Flow.TLSInfo.ClientSide(sni: "api.test", version: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256",
                                             alpn: "h2")
        let upstream = Flow.TLSInfo.UpstreamSide(version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384", alpn: "h2",
                                                 verified: false, verifyError: "self-signed certificate", chain: [])
        let shared = Flow.TLSInfo(client: client, upstream: upstream)
        var copy = shared
        #expect(copy.isIdentical(to: shared) && copy == shared)
        copy.upstream?.verified = true
        #expect(!copy.isIdentical(to: shared) && copy != shared)
        #expect(shared.upstream?.verified == false && copy.upstream?.verified == true)
        #expect(copy.client == client, "the other side is kept")
        let rebuilt = Flow.TLSInfo(client: client, upstream: upstream)
        #expect(!rebuilt.isIdentical(to: shared) && rebuilt == shared, "equal parts in two boxes are equal")

        let clientOnly = Flow.TLSInfo(client: client)
        let json = String(decoding: try JSONEncoder().encode(clientOnly), as: UTF8.self)
        #expect(!json.contains("upstream"), "an absent side is left out: \(json)")
        #expect(try JSONDecoder().decode(Flow.TLSInfo.self, from: Data(json.utf8)) == clientOnly)
        #expect(try JSONDecoder().decode(Flow.TLSInfo.self, from: Data("{}".utf8)) == Flow.TLSInfo())

        var flow = FlowJSONWriterTests.everything
        flow.tls = shared
        var other = flow
        other.id = "second stream"
        #expect(other.tls?.isIdentical(to: shared) == true, "a flow's copy shares its TLS box")
        #expect(try JSONDecoder().decode(Flow.self, from: Data(flow.jsonBytes)) == flow)
    }
}
