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
}
