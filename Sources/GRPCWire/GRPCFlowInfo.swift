/// What a flow record says about a gRPC call: who was called, how it ended, and its messages.
///
/// Filled by `GRPCFlowRecorder` from the request and response heads, bodies and trailers;
/// written to the flow log and HAR through `json` (field names in `GRPCFlowInfo+JSON.swift`).
public struct GRPCFlowInfo: Sendable, Equatable {
    /// `pkg.Service` from `/pkg.Service/Method`; nil when the path is not a gRPC path.
    public var service: String?
    public var method: String?
    /// `grpc-web` or `grpc-web-text` for a gRPC-Web call (`GRPCWireFormat`); nil for gRPC itself.
    public var wireProtocol: String?
    /// `grpc-status` from the trailers (or from the response head for Trailers-Only).
    public var status: Int?
    /// `grpc-message`, percent-decoded.
    public var message: String?
    /// The request's `grpc-encoding`.
    public var encoding: String?
    /// The response's `grpc-encoding`.
    public var responseEncoding: String?
    /// True when the status came in the response head with no body ("Trailers-Only").
    public var trailersOnly: Bool
    /// Every message seen each way, recorded or not.
    public var requestMessages: Int
    public var responseMessages: Int
    /// The recorded messages, in the order they were seen (directions interleave when streaming).
    public var messages: [GRPCMessageRecord]
    /// Framing problems: an invalid flag byte, a body that ended inside a prefix.
    public var notes: [String]
    /// The rich error a failed call carried (`grpc-status-details-bin`, a Connect error's
    /// `details`): `{code, message, details: [{type, typed | decoded}]}` (`GRPCStatusDetails`).
    public var statusDetails: JSONValue? = nil

    public init(service: String? = nil, method: String? = nil, status: Int? = nil, message: String? = nil,
                encoding: String? = nil, responseEncoding: String? = nil, trailersOnly: Bool = false,
                requestMessages: Int = 0, responseMessages: Int = 0, messages: [GRPCMessageRecord] = [],
                notes: [String] = [], wireProtocol: String? = nil) {
        self.wireProtocol = wireProtocol
        self.service = service
        self.method = method
        self.status = status
        self.message = message
        self.encoding = encoding
        self.responseEncoding = responseEncoding
        self.trailersOnly = trailersOnly
        self.requestMessages = requestMessages
        self.responseMessages = responseMessages
        self.messages = messages
        self.notes = notes
    }
}

/// One message of a gRPC call as the flow record keeps it.
public struct GRPCMessageRecord: Sendable, Equatable {
    /// Which way a message went.
    public enum Direction: String, Sendable, Equatable {
        case request, response
    }

    public var direction: Direction
    /// The Compressed-Flag.
    public var compressed: Bool
    /// The declared Message-Length (bytes on the wire, before decompression).
    public var length: Int
    /// The first bytes of the message as sent (compressed if it was), base64.
    public var firstBytesBase64: String
    /// The schema-less decoding, when the message could be had whole (or its prefix, marked by
    /// the decoding's error).
    public var decoded: ProtobufRawMessage?
    /// With a schema (`--proto`): the message's type, and the message as protobuf's JSON mapping
    /// writes it (`ProtoSchema.decode(_:as:)`).
    public var messageType: String?
    public var typed: JSONValue?
    /// Why something is missing: cut short, too large to hold, unknown encoding, damaged data.
    public var note: String?
    /// When the message had arrived whole (its last byte read), seconds since 1970 to the
    /// millisecond: a stream's messages show their pace, as a WebSocket's do.
    public var time: Double?

    public init(direction: Direction, compressed: Bool, length: Int, firstBytesBase64: String,
                decoded: ProtobufRawMessage? = nil, messageType: String? = nil, typed: JSONValue? = nil,
                note: String? = nil, time: Double? = nil) {
        self.time = time
        self.messageType = messageType
        self.typed = typed
        self.direction = direction
        self.compressed = compressed
        self.length = length
        self.firstBytesBase64 = firstBytesBase64
        self.decoded = decoded
        self.note = note
    }
}
