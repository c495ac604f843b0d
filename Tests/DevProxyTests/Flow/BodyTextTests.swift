@testable import DevProxy
import Testing

/// Which content types make a body text whatever its bytes look like (`BodyText.isTextual`).
@Suite struct BodyTextTests {
    @Test(arguments: [
        "text/plain", "TEXT/HTML; charset=utf-8", "  text/csv", "application/json", "application/JSON;charset=UTF-8",
        "application/vnd.api+json", "application/problem+json", "application/x-ndjson", "image/svg+xml",
        "application/xml", "application/javascript", "text/javascript", "application/x-javascript",
        "application/ecmascript", "application/x-www-form-urlencoded", "application/graphql-response+json",
        "application/graphql", "application/yaml", "application/x-yaml", "text/csv", "application/csv",
    ])
    func textualTypes(_ type: String) {
        #expect(BodyText.isTextual(contentType: type))
    }

    @Test(arguments: [
        "application/octet-stream", "image/png", "application/grpc", "application/grpc+proto", "application/protobuf",
        "multipart/form-data; boundary=json", "application/x-www-form", "video/mp4", "", ";json", "jso", "application/js",
        "application/zip; name=data.json",
    ])
    func binaryTypes(_ type: String) {
        #expect(!BodyText.isTextual(contentType: type))
    }

    @Test func noTypeIsNotTextual() {
        #expect(!BodyText.isTextual(contentType: nil))
    }
}
