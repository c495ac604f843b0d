import GRPCWire
import Testing

/// `:path` → service and method, and the paths that are not gRPC's.
@Suite struct GRPCPathTests {
    @Test func serviceAndMethodAreSplit() throws {
        let path = try #require(GRPCPath("/lab.Echo/Unary"))
        #expect(path.service == "lab.Echo")
        #expect(path.method == "Unary")
        #expect(GRPCPath("/grpc.health.v1.Health/Check")?.service == "grpc.health.v1.Health")
        #expect(GRPCPath("/Echo/Unary")?.service == "Echo")
    }

    @Test(arguments: ["", "/", "//", "/lab.Echo", "/lab.Echo/", "//Unary", "lab.Echo/Unary", "/a/b/c",
                      "/lab.Echo/Unary?x=1", "/lab.Echo/Un ary", "/lab.Echo/Unary#f"])
    func otherPathsAreNotGRPC(_ path: String) {
        #expect(GRPCPath(path) == nil)
    }
}
