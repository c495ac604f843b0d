import Foundation
import GRPCWire

/// The `--har FILE` sink: keeps every flow in memory and writes one HAR file (0600) at
/// `close()`, when the proxy exits.
public final class HARFlowSink: FlowSink, @unchecked Sendable {
    // @unchecked: `flows`, `closed` and `firstError` are only touched under `lock`.
    public let path: String
    public let creatorVersion: String
    private let lock = NSLock()
    private var flows: [Flow] = []
    private var closed = false
    private var firstError: FlowLogError?
    private var laterSchema: (@Sendable (_ host: String, _ port: Int) -> ProtoSchema?)?

    public init(path: String, creatorVersion: String = HARWriter.defaultCreatorVersion) {
        self.path = path
        self.creatorVersion = creatorVersion
    }

    public func record(_ flow: Flow) {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        // Kept until exit: without its bodies' spool files, which must go once the store has them.
        flows.append(flow.releasingSpool())
    }

    /// Writes an empty HAR file at `path` now: a path that cannot be written fails at start-up,
    /// not at exit with the session's flows, and a proxy killed before `close` leaves a valid file.
    /// `/dev/stdout` or a FIFO gets the one document at exit only.
    public func writeEmpty() throws {
        // A directory is refused now, not at exit with every flow lost.
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw FlowLogError(.notWritable, "cannot write \(path): it is a directory; give --har a file path, such as "
                               + "\(path.hasSuffix("/") ? path : path + "/")session.har")
        }
        guard FlowFile.isRegularOrAbsent(path) else { return }
        try HARWriter.write([], to: path, creatorVersion: creatorVersion)
    }

    /// At `close()`, gRPC calls recorded without their messages' types are written typed by what
    /// `schema` gives for their server then (`--grpc-reflection` answers that came after them).
    public func typeLater(by schema: @escaping @Sendable (_ host: String, _ port: Int) -> ProtoSchema?) {
        lock.withLock { laterSchema = schema }
    }

    /// Writes the HAR file once; later flows are dropped. A failure is kept for `writeError`.
    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        if let laterSchema {
            for index in flows.indices where flows[index].grpc != nil {
                let flow = flows[index]
                if let schema = laterSchema(flow.server.host, flow.server.port),
                   let typed = flow.typedFromRecord(by: schema) {
                    flows[index] = typed
                }
            }
        }
        do {
            try HARWriter.write(flows, to: path, creatorVersion: creatorVersion)
        } catch let error as FlowLogError {
            firstError = error
        } catch {
            firstError = FlowLogError(.io, "cannot write \(path): \(error)")
        }
        flows = []
    }

    /// Why the HAR file could not be written at `close()`, if it could not.
    public var writeError: FlowLogError? {
        lock.lock()
        defer { lock.unlock() }
        return firstError
    }
}
