import Testing
@testable import HTTP1

@Suite struct HTTPHeadersTests {
    @Test func lookupIgnoresCase() {
        let headers: HTTPHeaders = ["Host": "a", "X-A": "1", "x-a": "2"]
        #expect(headers["HOST"] == "a")
        #expect(headers.values("X-a") == ["1", "2"])
    }
}
