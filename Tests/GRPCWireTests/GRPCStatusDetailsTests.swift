import Foundation
@testable import GRPCWire
import Testing
import TestSupport

/// gRPC's rich error model in the flow: `grpc-status-details-bin` (a base64 `google.rpc.Status`)
/// and a Connect error's `details`, each detail typed by the built-in `google.rpc` error details,
/// by `--proto`, or decoded schema-less.
@Suite struct GRPCStatusDetailsTests {
    static func field(_ number: Int, _ data: [UInt8]) -> [UInt8] {
        [UInt8(number << 3 | 2), UInt8(data.count)] + data
    }

    static func any(_ type: String, _ value: [UInt8]) -> [UInt8] {
        field(1, Array("type.googleapis.com/\(type)".utf8)) + field(2, value)
    }

    /// Status{code: 8, message: "slow down", details: [RetryInfo{retry_delay: 2.5 s},
    /// ErrorInfo{reason, domain, metadata}, an unknown type]}.
    static let status: [UInt8] = [0x08, 8] + field(2, Array("slow down".utf8))
        + field(3, any("google.rpc.RetryInfo", field(1, [0x08, 2, 0x10, 0x80, 0xCA, 0xB5, 0xEE, 0x01])))
        + field(3, any("google.rpc.ErrorInfo", field(1, Array("RATE_LIMITED".utf8)) + field(2, Array("api.test".utf8))
                                                 + field(3, field(1, Array("limit".utf8)) + field(2, Array("10".utf8)))))
        + field(3, any("acme.Secret", [0x08, 42]))

    private func recorded(trailer: String) -> GRPCFlowInfo {
        var recorder = GRPCFlowRecorder(path: "/a.B/C", requestHeaders: [])
        recorder.responseHead(headers: [("content-type", "application/grpc")], status: 200)
        recorder.responseTrailers([("grpc-status", "8"), ("grpc-message", "slow%20down"), ("grpc-status-details-bin", trailer)])
        return recorder.finish()
    }

    @Test(arguments: [true, false])
    func theTrailerIsReadPaddedOrNot(_ padded: Bool) throws {
        var text = Data(Self.status).base64EncodedString()
        if !padded { text = text.replacingOccurrences(of: "=", with: "") }
        let info = recorded(trailer: text)
        let details = try #require(info.statusDetails, "\(info.notes)")
        #expect(details["code"] == .int(8) && details["message"] == .string("slow down"))
        #expect(details["details"]?[0] == .object([(key: "type", value: .string("google.rpc.RetryInfo")),
                                                    (key: "typed", value: .object([(key: "retryDelay", value: .string("2.500s"))]))]),
                "\(details)")
        #expect(details["details"]?[1]?["typed"] == .object([
            (key: "domain", value: .string("api.test")),
            (key: "metadata", value: .object([(key: "limit", value: .string("10"))])),
            (key: "reason", value: .string("RATE_LIMITED")),
        ]), "\(details)")
        // A type nobody defined: its fields by number.
        #expect(details["details"]?[2]?["type"] == .string("acme.Secret"))
        #expect(details["details"]?[2]?["decoded"] != nil && details["details"]?[2]?["typed"] == nil)
        // It reads back from the flow's JSON.
        #expect(try GRPCFlowInfo(json: info.json) == info)
    }

    @Test func aTrailerThatIsNotAStatusIsANote() {
        #expect(recorded(trailer: "not base64!").notes == ["response: grpc-status-details-bin is not base64"])
        let truncated = Data(Self.status.prefix(5)).base64EncodedString()
        let info = recorded(trailer: truncated)
        #expect(info.statusDetails == nil)
        #expect(info.notes.first?.hasPrefix("response: grpc-status-details-bin is not a google.rpc.Status") == true, "\(info.notes)")
    }

    /// Connect puts the same details in its error JSON: `type` and a base64 `value`.
    @Test func connectErrorDetailsAreReadTheSameWay() throws {
        let badRequest = Self.field(1, Self.field(1, Array("text".utf8)) + Self.field(2, Array("empty".utf8)))
        let value = Data(badRequest).base64EncodedString().replacingOccurrences(of: "=", with: "")
        var recorder = GRPCFlowRecorder(path: "/lab.Echo/Unary", requestHeaders: [], format: .connectUnary)
        recorder.responseHead(headers: [("content-type", "application/json")], status: 400)
        recorder.responseBody(Array(#"{"code":"invalid_argument","message":"bad","details":[{"type":"google.rpc.BadRequest","value":"\#(value)"},{"type":"x.Y","value":"***"}]}"#.utf8))
        let details = try #require(recorder.finish().statusDetails)
        #expect(details["code"] == .int(3))
        #expect(details["details"]?[0]?["typed"] == .object([(key: "fieldViolations", value: .array([
            .object([(key: "description", value: .string("empty")), (key: "field", value: .string("text"))])]))]))
        #expect(details["details"]?[1] == .object([(key: "note", value: .string("value is not base64")), (key: "type", value: .string("x.Y"))]))
    }

    /// The embedded descriptor set is what protoc makes of the source written beside it.
    @Test func theBuiltInSchemaIsItsSourceCompiled() throws {
        let dir = TemporaryDirectory()
        for (path, text) in GRPCStatusDetails.errorDetailsSource {
            try FileManager.default.createDirectory(atPath: dir.file((path as NSString).deletingLastPathComponent),
                                                    withIntermediateDirectories: true)
            _ = dir.write(path, text + "\n")
        }
        let result = try Subprocess.run("protoc", ["--include_imports", "--descriptor_set_out=" + dir.file("out.desc"),
                                                   "-I", dir.path, dir.file("google/rpc/error_details.proto")], timeout: 60)
        #expect(result.status == 0, "\(result.output)")
        let compiled = try #require(FileManager.default.contents(atPath: dir.file("out.desc")))
        #expect(compiled.base64EncodedString() == GRPCStatusDetails.errorDetailsDescriptorSet)
        #expect(GRPCStatusDetails.errorDetails.messages.keys.filter { $0.hasPrefix("google.rpc.") }.count == 15)
    }
}
