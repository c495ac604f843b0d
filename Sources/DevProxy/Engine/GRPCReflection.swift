import Foundation
import GRPCWire
import HTTP1
import HTTP2
import HTTPTypes
import Synchronization

/// `devproxy run --grpc-reflection`: the field names of a gRPC service's messages without its
/// `.proto`, from the server itself, as grpcurl and Postman get them.
///
/// The first call to a service that neither `--proto` nor an earlier answer defines has DevProxy
/// ask that server, once, in the background, for the files that define the service (server
/// reflection: `grpc.reflection.v1`, then `v1alpha`), and the calls after the answer are recorded
/// typed, as with `--proto` (`grpc.messages[].typed`). The question goes through DevProxy's own
/// regular listener, as the web UI's replays do, so it reaches the server as any request would
/// (upstream TLS verification, `--resolve`, an upstream proxy) and is itself recorded as a flow,
/// with an id that says what it is (`…-reflection-N`). A server that does not offer reflection
/// is named once in a warning, and its calls stay decoded without field names. A gRPC-Web call's
/// server is asked over gRPC-Web (`Framing`). Each answer also goes to `onLearned`'s handler:
/// `devproxy run` keeps it in the session, which `devproxy web FILE` types earlier calls by.
final class GRPCReflection: Sendable {
    /// Where DevProxy's regular listener is, and what a request to it needs.
    struct Listener: Sendable {
        var host: String
        var port: Int
        /// `Proxy-Authorization` when the proxy wants credentials (`--proxy-auth`).
        var authorization: String?
        /// The run's replay secret: the question's flow then takes the id given it.
        var secret: String?
    }

    private struct State {
        /// By origin (`host:port`): what `--proto` and the server's answers define.
        var schemas: [String: ProtoSchema] = [:]
        /// `origin service` pairs asked (or being asked) already.
        var asked: Set<String> = []
        /// Told of each answer (`onLearned`): the session store keeps them.
        var learnedHandler: (@Sendable (LearnedGRPCSchema) -> Void)?
        /// Answers that came before a handler was set, given to it when it is.
        var unhandled: [LearnedGRPCSchema] = []
    }

    private let listener: Listener
    /// `--proto`'s schema: it wins over a server's answer on the same names.
    private let base: ProtoSchema?
    private let state = Mutex(State())
    private let counter = Atomic<Int>(0)
    private let prefix = String(UInt64.random(in: .min ... .max), radix: 16)
    /// How long one question may take, connection and answer.
    let timeout: TimeInterval
    /// Called with a reason when a server could not be asked (a warning on stderr in `run`).
    private let warn: @Sendable (String) -> Void
    /// Called when a lookup ended, answered or not (tests wait on it).
    private let finished: @Sendable (String) -> Void

    /// Origin-service pairs asked at most: past it, a new service is not asked (an app calling
    /// thousands of hosts does not grow the set without end).
    static let askedKept = 1_000
    /// The largest answer read: descriptor files of a large API run to a few MiB.
    static let largestAnswer = 32 * 1024 * 1024

    init(listener: Listener, base: ProtoSchema?, timeout: TimeInterval = 15,
         warn: @escaping @Sendable (String) -> Void = { StandardError.warn($0) },
         finished: @escaping @Sendable (String) -> Void = { _ in }) {
        self.listener = listener
        self.base = base
        self.timeout = timeout
        self.warn = warn
        self.finished = finished
    }

    /// How a server is asked: as its calls came.
    enum Framing: Sendable {
        /// gRPC over HTTP/2 (`application/grpc`).
        case grpc
        /// gRPC-Web (`application/grpc-web`, `-text`): a browser's calls, to a server that speaks
        /// it (Envoy's grpc_web filter, grpcwebproxy, Connect, tonic-web, sonora), asked over
        /// HTTP/1.1 in binary mode, which every such server takes; its trailers come in the body.
        case grpcWeb
    }

    /// How a request of `contentType` is a call this asks about; nil for one that is no gRPC or
    /// gRPC-Web call (Connect's own protocol has no reflection of its own: its servers offer
    /// reflection over gRPC and gRPC-Web, which a Connect client's calls do not say).
    static func framing(contentType: String?) -> Framing? {
        guard let type = contentType?.lowercased(), type.hasPrefix("application/grpc") else { return nil }
        return type.hasPrefix("application/grpc-web") ? .grpcWeb : .grpc
    }

    /// The schema to record a call to `host`:`port` at `path` with; when it defines no such
    /// method, a background question to the server starts (once per server and service), framed
    /// as the call was (`framing`).
    func schema(host: String, port: Int, tls: Bool, path: String, framing: Framing = .grpc) -> ProtoSchema? {
        let origin = Self.origin(host: host, port: port)
        guard let call = GRPCPath(path), !ServerReflection.services.contains(call.service) else {
            return state.withLock { $0.schemas[origin] } ?? base
        }
        let (schema, ask) = state.withLock { state -> (ProtoSchema?, Bool) in
            let schema = state.schemas[origin] ?? base
            guard schema?.method(path: path) == nil, state.asked.count < Self.askedKept else { return (schema, false) }
            return (schema, state.asked.insert(origin + " " + call.service).inserted)
        }
        if ask {
            let thread = Thread { [self] in
                lookUp(service: call.service, host: host, port: port, tls: tls, web: framing == .grpcWeb,
                       origin: origin)
            }
            thread.name = "devproxy-grpc-reflection"
            thread.start()
        }
        return schema
    }

    /// Calls `handler` with every answer so far and each one after (on the thread that asked).
    func onLearned(_ handler: @escaping @Sendable (LearnedGRPCSchema) -> Void) {
        let earlier = state.withLock { state in
            state.learnedHandler = handler
            defer { state.unhandled = [] }
            return state.unhandled
        }
        earlier.forEach(handler)
    }

    /// What calls to `host`:`port` are typed by now, without asking.
    func known(host: String, port: Int) -> ProtoSchema? {
        let origin = Self.origin(host: host, port: port)
        return state.withLock { $0.schemas[origin] } ?? base
    }

    /// The key a server's schema is kept under: `host:port` in lower case, the port always named.
    private static func origin(host: String, port: Int) -> String {
        authority(host: host, port: port, defaultPort: -1).lowercased()
    }

    /// `host:port`, the port left out when it is `defaultPort`, an IPv6 address bracketed.
    static func authority(host: String, port: Int, defaultPort: Int = 443) -> String {
        URIHost.authority(host: host, port: port == defaultPort ? nil : port)
    }

    /// Why one question got no usable answer; `unimplemented`: the server does not have this
    /// version of the service (try the next).
    private struct Failure: Error {
        var reason: String
        var unimplemented = false
    }

    /// The server a question goes to: its authority, whether it speaks TLS (else h2c), and
    /// whether it is asked over gRPC-Web.
    private struct Server {
        var authority: String
        var tls: Bool
        var web = false
    }

    private func lookUp(service: String, host: String, port: Int, tls: Bool, web: Bool, origin: String) {
        defer { finished(origin + " " + service) }
        let server = Server(authority: Self.authority(host: host, port: port, defaultPort: tls ? 443 : 80),
                            tls: tls, web: web)
        var reasons: [String] = []
        var unimplemented = 0
        for path in ServerReflection.paths {
            let version = path.split(separator: ".").dropFirst(2).first.map(String.init) ?? path
            do {
                let files = try files(defining: service, at: server, path: path)
                let descriptorSet = ServerReflection.descriptorSet(files)
                var schema = try ProtoSchema(descriptorSet: descriptorSet)
                guard schema.methods.keys.contains(where: { $0.hasPrefix(service + "/") }) else {
                    throw Failure(reason: "the files it sent define no service \(service)")
                }
                if let base { schema.merge(base) }
                let learned = LearnedGRPCSchema(host: host, port: port, service: service, descriptorSet: descriptorSet)
                let handler = state.withLock { state -> (@Sendable (LearnedGRPCSchema) -> Void)? in
                    var merged = state.schemas[origin] ?? ProtoSchema()
                    merged.merge(schema)
                    state.schemas[origin] = merged
                    if state.learnedHandler == nil { state.unhandled.append(learned) }
                    return state.learnedHandler
                }
                handler?(learned)
                return
            } catch let failure as Failure {
                reasons.append("\(version): \(failure.reason)")
                if !failure.unimplemented { break }
                unimplemented += 1
            } catch let error as ProtoWireError {
                reasons.append("\(version): its answer is not server reflection's: \(error.reason)")
                break
            } catch {
                reasons.append("\(version): \(error)")
                break
            }
        }
        let why = unimplemented == ServerReflection.paths.count
            ? "it does not offer server reflection: v1 and v1alpha are UNIMPLEMENTED" : reasons.joined(separator: "; ")
        let named = server.authority + (server.web ? " (asked over gRPC-Web)" : "")
        warn("grpc reflection: \(named) did not describe \(service) (\(why)); "
             + "its calls are recorded without field names: give --proto FILE")
    }

    /// The files that define `service` and the ones they import, asking again for imports the
    /// server did not send with them (at most four rounds).
    private func files(defining service: String, at server: Server, path: String) throws -> [[UInt8]] {
        var files: [[UInt8]] = []
        var have: Set<String> = []
        var asked: Set<String> = []
        var queries: [ServerReflection.Query] = [.fileContainingSymbol(service)]
        for _ in 0..<4 where !queries.isEmpty {
            let answer = try ask(queries, at: server, path: path)
            if files.isEmpty && answer.files.isEmpty {
                throw Failure(reason: answer.errors.first ?? "it sent no file")
            }
            var imports: [String] = []
            for file in answer.files {
                let (name, dependencies) = try ServerReflection.nameAndDependencies(of: file)
                guard have.insert(name).inserted else { continue }
                files.append(file)
                imports += dependencies
            }
            queries = imports.filter { !have.contains($0) && asked.insert($0).inserted }.map { .fileByFilename($0) }
        }
        return files
    }

    /// A response as either transport read it.
    private struct Reply {
        var status: Int
        var body: [UInt8]
        /// A field of the head or, first, of the trailers (names in lower case).
        var field: (String) -> String?
    }

    /// One call to the reflection service at `path`, through the proxy's own listener.
    private func ask(_ queries: [ServerReflection.Query], at server: Server, path: String) throws -> ServerReflection.Answer {
        let socket: Socket
        do {
            socket = try Socket.connect(host: listener.host, port: listener.port, timeout: 10)
        } catch {
            throw Failure(reason: "DevProxy's own listener \(listener.host):\(listener.port) refused the question")
        }
        defer { socket.close() }
        socket.setTimeout(timeout)
        let body = ServerReflection.requestBody(host: "", queries: queries)
        let stream = PlainStream(socket)
        var reply = server.tls || server.web ? try askOverHTTP1(stream, body: body, server: server, path: path)
            : try askOverTunnel(stream, body: body, server: server, path: path)
        if server.web, reply.status == 200 {
            // gRPC-Web: the trailers are the body's last frame (flag 0x80), after the messages.
            let (messages, trailers) = try Self.gRPCWebParts(reply.body)
            let head = reply.field
            reply = Reply(status: reply.status, body: messages) { trailers[$0] ?? head($0) }
        }
        guard reply.status == 200 else {
            let text = String(decoding: reply.body.prefix(300), as: UTF8.self)
            let reason = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
            throw Failure(reason: "HTTP \(reply.status)\(reason.isEmpty ? "" : ": " + reason)",
                          unimplemented: reply.status == 404)
        }
        if let status = reply.field("grpc-status"), status.trimmingCharacters(in: .whitespaces) != "0" {
            let code = GRPCStatus.code(fromHeader: status)
            let message = reply.field("grpc-message").map(GRPCStatus.decodeMessage)
            let name = code.flatMap(GRPCStatus.name(of:)) ?? "grpc-status \(status)"
            throw Failure(reason: name + (message.map { ": " + $0 } ?? ""), unimplemented: code == 12)
        }
        do {
            return try ServerReflection.answer(reply.body)
        } catch {
            throw Failure(reason: "its answer is not server reflection's: \(error.reason)")
        }
    }

    /// An https server: an absolute-form HTTP/1.1 request, as the web UI's replays send, which the
    /// proxy sends on over h2 (`TE: trailers` kept) and whose trailers come back chunked. A gRPC-Web
    /// server (https or http): the same request framed as a browser's gRPC-Web client frames it.
    private func askOverHTTP1(_ stream: PlainStream, body: [UInt8], server: Server, path: String) throws -> Reply {
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: server.authority)
        if server.web {
            fields.add(name: "Content-Type", value: "application/grpc-web+proto")
            fields.add(name: "Accept", value: "application/grpc-web+proto")
            fields.add(name: "X-Grpc-Web", value: "1")
        } else {
            fields.add(name: "Content-Type", value: "application/grpc")
            fields.add(name: "TE", value: "trailers")
        }
        fields.add(name: "User-Agent", value: Self.userAgent)
        fields.add(name: "Content-Length", value: String(body.count))
        fields.add(name: "Connection", value: server.web ? "close" : "TE, close")
        if let authorization = listener.authorization { fields.add(name: "Proxy-Authorization", value: authorization) }
        if let secret = listener.secret {
            let id = "\(prefix)-reflection-\(counter.add(1, ordering: .relaxed).newValue)"
            fields.add(name: ReplayMark.header, value: ReplayMark(id: id, original: nil).value(secret: secret))
        }
        let scheme = server.tls ? "https" : "http"
        let target = "\(scheme)://\(server.authority)\(path)"
        try stream.write(HTTP1Serializer.serialize(HTTPRequestHead(method: "POST", target: target,
                                                                   version: .http11, headers: fields)) + body)
        var parser = HTTP1ResponseParser()
        parser.expectResponse(toMethod: "POST")
        let (head, answer, trailers) = try readHTTP1(stream, &parser)
        return Reply(status: head.status, body: answer) { trailers[$0] ?? head.headers[$0] }
    }

    /// A cleartext (h2c) server: a CONNECT tunnel through the proxy and HTTP/2 by prior knowledge
    /// in it, as grpcio's insecure channel goes, which the proxy intercepts. (The replay mark is
    /// not sent: it is taken off HTTP/1.1 heads only, and an origin must never see it.)
    private func askOverTunnel(_ stream: PlainStream, body: [UInt8], server: Server, path: String) throws -> Reply {
        var fields = HTTPHeaders()
        fields.add(name: "Host", value: server.authority)
        if let authorization = listener.authorization { fields.add(name: "Proxy-Authorization", value: authorization) }
        try stream.write(HTTP1Serializer.serialize(HTTPRequestHead(method: "CONNECT", target: server.authority,
                                                                   version: .http11, headers: fields)))
        var parser = HTTP1ResponseParser()
        parser.expectResponse(toMethod: "CONNECT")
        let (head, refusal, _) = try readHTTP1(stream, &parser)
        guard head.status == 200 else { return Reply(status: head.status, body: refusal) { _ in nil } }
        let session: HTTP2Session
        let id: Int32
        do {
            session = try HTTP2Session(role: .client)
            let request = HTTP2HeaderBlock.request(method: "POST", scheme: "http", authority: server.authority, path: path,
                                                   fields: [HTTP2Field("content-type", "application/grpc"),
                                                            HTTP2Field("te", "trailers"),
                                                            HTTP2Field("user-agent", Self.userAgent)])
            id = try session.submitRequest(request, endStream: false)
            try session.submitData(stream: id, body, endStream: true)
        } catch {
            throw Failure(reason: "HTTP/2: \(error)")
        }
        var status: Int?
        var head2: [HTTP2Field] = []
        var trailers: [HTTP2Field] = []
        var answer: [UInt8] = []
        var pending = parser.takeRemainingBytes()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let output = session.pendingOutput()
            if !output.isEmpty { try stream.write(output) }
            if pending.isEmpty {
                let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
                guard count > 0 else { throw Failure(reason: "the connection closed before the answer ended") }
                pending = Array(buffer[..<count])
            }
            let events: [HTTP2Event]
            do {
                events = try session.receive(pending)
            } catch {
                throw Failure(reason: "HTTP/2: \(error)")
            }
            pending = []
            for event in events {
                switch event {
                case .responseHead(id, let block, _):
                    status = block.status
                    head2 = block.fields
                case .data(id, let bytes, _):
                    guard answer.count + bytes.count <= Self.largestAnswer else {
                        throw Failure(reason: "its answer is over \(Self.largestAnswer / 1_048_576) MiB")
                    }
                    answer += bytes
                    try? session.consume(stream: id, count: bytes.count)
                case .trailers(id, let fields):
                    trailers = fields
                case .streamReset(id, let code, _):
                    throw Failure(reason: "the stream was reset with \(code)")
                case .streamClosed(id, _):
                    guard let status else { throw Failure(reason: "the stream closed without a response") }
                    return Reply(status: status, body: answer) { name in
                        (trailers.first { $0.nameString == name } ?? head2.first { $0.nameString == name })?.valueString
                    }
                case .goAway(_, let code, _) where status == nil:
                    throw Failure(reason: "the connection was closed with GOAWAY \(code)")
                default:
                    break
                }
            }
        }
        throw Failure(reason: "no answer within \(Int(timeout)) s")
    }

    private static let userAgent = "devproxy-grpc-reflection"

    /// A gRPC-Web response body's message frames, as a gRPC body, and the fields of its trailers
    /// frame (names in lower case).
    static func gRPCWebParts(_ body: [UInt8]) throws -> (messages: [UInt8], trailers: [String: String]) {
        var messages: [UInt8] = []
        var trailers: [String: String] = [:]
        var offset = 0
        while offset < body.count {
            guard body.count - offset >= 5 else {
                throw Failure(reason: "a gRPC-Web frame's prefix is cut at byte \(offset)")
            }
            let length = body[offset + 1 ..< offset + 5].reduce(0) { $0 << 8 | Int($1) }
            guard length <= body.count - offset - 5 else {
                throw Failure(reason: "a gRPC-Web frame of \(length) bytes is cut")
            }
            let frame = body[offset ..< offset + 5 + length]
            offset += 5 + length
            guard body[frame.startIndex] & 0x80 != 0 else {
                messages += frame
                continue
            }
            let text = String(decoding: frame.dropFirst(5), as: UTF8.self)
            for line in text.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
                guard let colon = line.firstIndex(of: ":") else { continue }
                trailers[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] =
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return (messages, trailers)
    }

    /// Reads an HTTP/1.1 response to its end: its head, body and trailers. Nothing past a CONNECT's
    /// 200 is read (`takeRemainingBytes` has what came with it).
    private func readHTTP1(_ stream: PlainStream, _ parser: inout HTTP1ResponseParser) throws
        -> (HTTPResponseHead, [UInt8], HTTPHeaders) {
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            while let event = try parser.next() {
                switch event {
                case .head(let received) where !received.isInterim: head = received
                case .head: break
                case .body(let bytes):
                    guard body.count + bytes.count <= Self.largestAnswer else {
                        throw Failure(reason: "its answer is over \(Self.largestAnswer / 1_048_576) MiB")
                    }
                    body += bytes
                case .end(let trailers):
                    guard let head else { throw Failure(reason: "the response had no head") }
                    return (head, body, trailers)
                }
            }
            let count = try buffer.withUnsafeMutableBytes { try stream.read(into: $0) }
            if count == 0 {
                while let event = try parser.finish() {
                    if case .body(let bytes) = event { body += bytes }
                    if case .end(let trailers) = event, let head { return (head, body, trailers) }
                }
                throw Failure(reason: "the connection closed before the answer ended")
            }
            parser.feed(buffer[..<count])
        }
        throw Failure(reason: "no answer within \(Int(timeout)) s")
    }
}
