/// How a call's messages travel: gRPC over HTTP/2 (PROTOCOL-HTTP2.md); gRPC-Web (PROTOCOL-WEB.md,
/// what browsers speak through Envoy or a gRPC-Web server, over HTTP/1.1 or h2): the same
/// length-prefixed messages with the trailers as a last frame in the body, as bytes or, in text
/// mode, base64; or the Connect protocol (connectrpc.com/docs/protocol, connect-go, -es, -swift,
/// -kotlin): streaming calls in envelopes whose last one (flag 0x02) is a JSON end-of-stream, and
/// unary calls as a bare message each way, a failure as a JSON error with an HTTP status. The raw
/// value is what a flow record's `grpc.protocol` says.
public enum GRPCWireFormat: String, Sendable, Equatable, CaseIterable {
    case grpc
    case grpcWeb = "grpc-web"
    case grpcWebText = "grpc-web-text"
    case connect
    case connectUnary = "connect-unary"

    /// The content type without suffix (`+proto`, `+json`) or parameters, for the framed ones.
    public var contentType: String {
        switch self {
        case .connectUnary: "application/proto"
        default: "application/" + rawValue
        }
    }

    /// The flag bit that marks the body's closing frame (trailers, end of stream); nil for gRPC.
    var closingFlag: UInt8? {
        switch self {
        case .grpc, .connectUnary: nil
        case .grpcWeb, .grpcWebText: 0x80
        case .connect: 0x02
        }
    }
}
