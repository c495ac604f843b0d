/// How a call's messages travel: gRPC over HTTP/2 (PROTOCOL-HTTP2.md), or gRPC-Web
/// (PROTOCOL-WEB.md, what browsers speak through Envoy or a gRPC-Web server, over HTTP/1.1 or h2):
/// the same length-prefixed messages with the trailers as a last frame in the body, as bytes or,
/// in text mode, base64. The raw value is what a flow record's `grpc.protocol` says.
public enum GRPCWireFormat: String, Sendable, Equatable, CaseIterable {
    case grpc
    case grpcWeb = "grpc-web"
    case grpcWebText = "grpc-web-text"

    /// The content type without suffix (`+proto`, `+json`) or parameters.
    public var contentType: String { "application/" + rawValue }
}
