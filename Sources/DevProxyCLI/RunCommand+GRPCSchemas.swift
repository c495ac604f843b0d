import CertAuthority
import DevProxy
import SessionStore

extension RunCommand {
    /// `--grpc-reflection`'s answers outlive the run: each goes into the session (`grpc_schemas`,
    /// read by `devproxy web FILE`), and the HAR written at exit types the calls recorded before
    /// their answer came.
    static func keepGRPCSchemas(server: ProxyServer, configuration: ProxyConfiguration, session: SessionStore?,
                                sinks: [FlowSink]) {
        guard configuration.grpcReflection else { return }
        if let session {
            server.onGRPCSchemaLearned { learned in
                session.saveGRPCSchema(StoredGRPCSchema(host: learned.host, port: learned.port,
                                                        service: learned.service, learned: ISO8601.string(learned.learned),
                                                        descriptorSet: learned.descriptorSet))
            }
        }
        for case let har as HARFlowSink in sinks {
            har.typeLater { [server] host, port in server.knownSchema(host: host, port: port) }
        }
    }
}
