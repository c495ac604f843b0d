import DevProxy
import Foundation
import GRPCWire
import HTTPTypes
import SessionStore
import Synchronization

/// The gRPC schemas a saved session kept (`devproxy run --grpc-reflection`'s answers, table
/// `grpc_schemas`), merged with `devproxy web FILE --proto`'s (which wins on the same names): what
/// the viewer types the calls recorded before an answer came by, as the run's own web UI did.
///
/// Rows are read as they come: a session still written by its `devproxy run` gains answers while
/// it is watched. A row that is not a descriptor set is named once on stderr and passed over.
final class SessionGRPCSchemas: Sendable {
    private struct State {
        /// The last row read.
        var lastID: Int64 = 0
        /// By server (`host port`, the host in lower case): the answers' schemas merged, then `base`.
        var schemas: [String: ProtoSchema] = [:]
    }

    private let store: SessionStore
    private let base: ProtoSchema?
    private let state = Mutex(State())

    init(store: SessionStore, base: ProtoSchema?) {
        self.store = store
        self.base = base
    }

    /// The schema calls to `host`:`port` are typed by: the session's answers for that server and
    /// `--proto`'s; nil when neither has any.
    func schema(host: String, port: Int) -> ProtoSchema? {
        // A session that cannot be read now keeps what was read before (the flow itself will say why).
        let rows = (try? store.grpcSchemas(after: state.withLock { $0.lastID })) ?? []
        var problems: [String] = []
        let schema = state.withLock { state -> ProtoSchema? in
            for row in rows where row.id > state.lastID {
                state.lastID = row.id
                let key = Self.key(host: row.host, port: row.port)
                guard row.descriptorSet.count == row.size else {
                    let limit = StoredGRPCSchema.largestRead >> 20
                    problems.append(Self.unreadable(row, "it is \(row.size) bytes, over the \(limit) MiB read"))
                    continue
                }
                let learned: ProtoSchema
                do throws(ProtoWireError) {
                    learned = try ProtoSchema(descriptorSet: row.descriptorSet)
                } catch {
                    problems.append(Self.unreadable(row, error.reason))
                    continue
                }
                var merged = state.schemas[key] ?? ProtoSchema()
                merged.merge(learned)
                if let base { merged.merge(base) }
                state.schemas[key] = merged
            }
            return state.schemas[Self.key(host: host, port: port)] ?? base
        }
        problems.forEach(Output.warning)
        return schema
    }

    private static func key(host: String, port: Int) -> String { "\(host.lowercased()) \(port)" }

    /// The warning for a kept answer that cannot be read, and why.
    private static func unreadable(_ row: StoredGRPCSchema, _ reason: String) -> String {
        let server = URIHost.authority(host: row.host, port: row.port)
        return "the session's gRPC schema of \(server) (\(row.service)) cannot be read: \(reason); "
            + "its calls are shown as recorded"
    }
}
