import Foundation

/// One answer `--grpc-reflection` got: the `FileDescriptorSet` a server described a service with.
public struct LearnedGRPCSchema: Sendable, Equatable {
    /// The server as the calls' flows name it (`server.host`, `server.port`).
    public var host: String
    public var port: Int
    /// The service asked about (`pkg.Service`); the files may define more.
    public var service: String
    /// A serialized `FileDescriptorSet`, as `ProtoSchema(descriptorSet:)` and `--proto` read it.
    public var descriptorSet: [UInt8]
    public var learned: Date

    public init(host: String, port: Int, service: String, descriptorSet: [UInt8], learned: Date = Date()) {
        self.host = host
        self.port = port
        self.service = service
        self.descriptorSet = descriptorSet
        self.learned = learned
    }
}

extension ProxyServer {
    /// Calls `handler` with each schema `--grpc-reflection` learns from a server, those learnt
    /// before the call included (`devproxy run` keeps them in the session, for `devproxy web FILE`);
    /// nothing without `--grpc-reflection`. Call it after `start()`.
    public func onGRPCSchemaLearned(_ handler: @escaping @Sendable (LearnedGRPCSchema) -> Void) {
        grpcReflection?.onLearned(handler)
    }
}
