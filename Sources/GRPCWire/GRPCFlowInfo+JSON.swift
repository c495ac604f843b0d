import Foundation

/// The flow-log spelling of a gRPC record:
/// `{service, method, protocol, status, message, encoding, response_encoding, trailers_only,
/// request_messages, response_messages, notes, status_details, messages: [{direction, compressed,
/// length, first_bytes, decoded, note}]}`; nil fields are left out. `Codable` goes through the same tree.
extension GRPCFlowInfo: Codable {
    /// The record as JSON, keys sorted.
    public var json: JSONValue {
        .sortedObject([
            ("service", service.map(JSONValue.string)),
            ("method", method.map(JSONValue.string)),
            ("protocol", wireProtocol.map(JSONValue.string)),
            ("status", status.map { .int(Int64($0)) }),
            ("message", message.map(JSONValue.string)),
            ("encoding", encoding.map(JSONValue.string)),
            ("response_encoding", responseEncoding.map(JSONValue.string)),
            ("trailers_only", .bool(trailersOnly)),
            ("request_messages", .int(Int64(requestMessages))),
            ("response_messages", .int(Int64(responseMessages))),
            ("messages", .array(messages.map(\.json))),
            ("notes", notes.isEmpty ? nil : .array(notes.map(JSONValue.string))),
            ("status_details", statusDetails),
        ])
    }

    /// Reads a record back from its JSON.
    /// - Throws: `GRPCJSONError` naming the first field that is missing or of the wrong type.
    public init(json: JSONValue) throws {
        let read = JSONReader(json, "grpc")
        self.init(service: try read.optional("service", \.stringValue), method: try read.optional("method", \.stringValue),
                  status: try read.optional("status", \.integer).map { Int($0) },
                  message: try read.optional("message", \.stringValue),
                  encoding: try read.optional("encoding", \.stringValue),
                  responseEncoding: try read.optional("response_encoding", \.stringValue),
                  trailersOnly: try read.required("trailers_only", \.boolValue),
                  requestMessages: Int(try read.required("request_messages", \.integer)),
                  responseMessages: Int(try read.required("response_messages", \.integer)),
                  messages: try read.array("messages").map(GRPCMessageRecord.init(json:)),
                  notes: try read.optionalArray("notes").map { try JSONReader($0, "notes").string() },
                  wireProtocol: try read.optional("protocol", \.stringValue))
        statusDetails = json["status_details"]
    }

    public init(from decoder: any Decoder) throws {
        do {
            try self.init(json: JSONValue(from: decoder))
        } catch let error as GRPCJSONError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.reason))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

extension GRPCMessageRecord {
    /// `{direction, compressed, length, first_bytes, decoded, message_type, typed, note, time}`.
    public var json: JSONValue {
        .sortedObject([
            ("direction", .string(direction.rawValue)),
            ("compressed", .bool(compressed)),
            ("length", .int(Int64(length))),
            ("first_bytes", .string(firstBytesBase64)),
            ("decoded", decoded?.json),
            ("message_type", messageType.map(JSONValue.string)),
            ("typed", typed),
            ("note", note.map(JSONValue.string)),
            ("time", time.map(JSONValue.double)),
        ])
    }

    init(json: JSONValue) throws {
        let read = JSONReader(json, "grpc.messages[]")
        guard let direction = Direction(rawValue: try read.required("direction", \.stringValue)) else {
            throw GRPCJSONError(reason: "grpc.messages[].direction is not request or response")
        }
        self.init(direction: direction, compressed: try read.required("compressed", \.boolValue),
                  length: Int(try read.required("length", \.integer)),
                  firstBytesBase64: try read.required("first_bytes", \.stringValue),
                  decoded: try json["decoded"].map(ProtobufRawMessage.init(json:)),
                  messageType: try read.optional("message_type", \.stringValue), typed: json["typed"],
                  note: try read.optional("note", \.stringValue), time: try read.optional("time", \.number))
    }
}
