import Foundation

/// What a gRPC server described itself with (`devproxy run --grpc-reflection`): one answer's
/// `FileDescriptorSet`, kept in `grpc_schemas` so that the session types the calls recorded before
/// the answer came when it is opened later (`devproxy web FILE`), as the run's own web UI did.
public struct StoredGRPCSchema: Sendable, Equatable {
    /// The row's id, increasing: a reader asks for the rows after the last one it read.
    public var id: Int64
    /// The server, as the calls' flows name it (`server.host`, `server.port`).
    public var host: String
    public var port: Int
    /// The service that was asked about (`pkg.Service`); the set may define more.
    public var service: String
    /// When the answer came, ISO 8601.
    public var learned: String
    /// A serialized `FileDescriptorSet` (`protoc --include_imports --descriptor_set_out`'s format);
    /// empty when read from a row over `largestRead`.
    public var descriptorSet: [UInt8]
    /// The stored set's size in bytes.
    public var size: Int

    public init(id: Int64 = 0, host: String, port: Int, service: String, learned: String, descriptorSet: [UInt8]) {
        self.id = id
        self.host = host
        self.port = port
        self.service = service
        self.learned = learned
        self.descriptorSet = descriptorSet
        size = descriptorSet.count
    }

    /// The largest set read back: a server's answer is at most 32 MiB (`GRPCReflection`), and a
    /// session file from elsewhere must not have a reader take in whatever it holds.
    public static let largestRead = 64 * 1024 * 1024
}

extension SessionStore {
    /// Keeps `schema` in the session, after the flows queued before it; waits for room in the
    /// queue rather than dropping it (an answer is rare and small beside the flows).
    public func saveGRPCSchema(_ schema: StoredGRPCSchema) {
        guard !isReadOnly else { return }
        put(.grpcSchema(schema))
    }

    /// The schemas kept after row `id` (0: all), oldest first; a set over `largest` bytes comes
    /// without its bytes (`size` says how large it is). A session written before they were kept
    /// (schema 8 and older, brought forward when opened) has none.
    public func grpcSchemas(after id: Int64 = 0,
                            largest: Int = StoredGRPCSchema.largestRead) throws -> [StoredGRPCSchema] {
        try read { database in
            try database.rows("""
                SELECT id, host, port, service, learned,
                       CASE WHEN length(descriptor_set) <= ? THEN descriptor_set END, length(descriptor_set)
                FROM grpc_schemas WHERE id > ? ORDER BY id
                """, [.integer(Int64(largest)), .integer(id)]) { row in
                var schema = StoredGRPCSchema(id: row.int64(0) ?? 0, host: row.string(1) ?? "", port: row.int(2) ?? 0,
                                              service: row.string(3) ?? "", learned: row.string(4) ?? "",
                                              descriptorSet: row.bytes(5) ?? [])
                schema.size = row.int(6) ?? 0
                return schema
            }
        }
    }
}
