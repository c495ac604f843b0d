import DevProxy
import Foundation
import GRPCWire

/// `POST /api/replay` with `grpc_messages`: a gRPC call resent with its request messages edited
/// as JSON (protobuf's JSON mapping, as the detail pane shows them typed), written as protobuf by
/// the schema the UI has for the server (`--proto`, `--grpc-reflection`) and framed as gRPC
/// (uncompressed: a message's flag says so whatever `grpc-encoding` names).
extension WebUI {
    /// The edited request's `grpc_messages`, read apart from the rest so that 64-bit integers
    /// keep every digit (`JSONValue`).
    private struct GRPCMessages: Decodable {
        var grpc_messages: [JSONValue]?
    }

    /// What `grpcBody` makes: the framed body, or the answer that says why there is none.
    enum GRPCBody {
        case body([UInt8])
        case refused(WebResponse)
    }

    /// Whether `body`, the request's JSON, carries `grpc_messages`.
    static func hasGRPCMessages(_ object: [String: Any]) -> Bool { object["grpc_messages"] != nil }

    /// The gRPC body of `grpc_messages` in `body` (the request's JSON) for a call to `url`, or the
    /// answer that says why there is none.
    func grpcBody(_ body: [UInt8], url components: URLComponents) -> GRPCBody {
        guard let decoded = try? JSONDecoder().decode(GRPCMessages.self, from: Data(body)), let messages = decoded.grpc_messages
        else { return .refused(.error(400, "grpc_messages must be an array of messages, each a JSON object")) }
        let path = components.percentEncodedPath
        guard let host = components.host else { return .refused(.error(400, "url must name a host")) }
        let port = components.port ?? (components.scheme == "http" ? 80 : 443)
        guard let schema = configuration.grpcSchema?(host, port), let method = schema.method(path: path) else {
            return .refused(.error(409, "no schema defines \(path) for \(host): start devproxy run with --proto FILE "
                                   + "(or --grpc-reflection, for a server that offers it) to send edited gRPC messages"))
        }
        var framed: [UInt8] = []
        for (index, message) in messages.enumerated() {
            let bytes: [UInt8]
            do {
                bytes = try schema.encode(message, as: method.input)
            } catch {
                return .refused(.error(400, "grpc_messages[\(index)] is not a \(method.input): \(error.reason)"))
            }
            framed += GRPCWireMessage.framed(bytes)
        }
        return .body(framed)
    }
}
