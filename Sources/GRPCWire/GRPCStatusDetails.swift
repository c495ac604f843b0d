import Foundation

/// gRPC's rich error model, read for the flow: a failed call's `grpc-status-details-bin` trailer
/// (gRPC, gRPC-Web) is a base64 `google.rpc.Status`, and a Connect error's JSON has `details`; each
/// detail is a message named by its type (`google.protobuf.Any`: `type_url` = 1, `value` = 2). The
/// `google.rpc` error details servers send (`BadRequest`, `ErrorInfo`, `RetryInfo`, …) are decoded
/// by their types whatever `--proto` says, other types by `--proto` when it defines them, the rest
/// schema-less. Recorded as `grpc.status_details`:
/// `{code, message, details: [{type, typed | decoded, note}]}`.
enum GRPCStatusDetails {
    /// `google.rpc.Status` (code = 1, message = 2, details = 3) from a `grpc-status-details-bin`
    /// value: base64, padded or not (gRPC's binary metadata). Returns the record, or why not.
    static func read(header value: String, schema: ProtoSchema?,
                     limits: ProtobufRawDecoder.Limits) -> (details: JSONValue?, note: String?) {
        guard let bytes = base64(value) else { return (nil, "grpc-status-details-bin is not base64") }
        var code: Int64?
        var message: String?
        var details: [JSONValue] = []
        var reader = ProtoWireReader(bytes[...])
        do {
            while let (number, field) = try reader.next() {
                switch (number, field) {
                case (1, .varint(let value)): code = Int64(Int32(truncatingIfNeeded: value))
                case (2, .bytes(let text)): message = String(decoding: text, as: UTF8.self)
                case (3, .bytes(let any)): details.append(try detail(any: any, schema: schema, limits: limits))
                default: continue
                }
            }
        } catch {
            return (nil, "grpc-status-details-bin is not a google.rpc.Status: \(error.reason)")
        }
        return (.sortedObject([("code", code.map(JSONValue.int)), ("message", message.map(JSONValue.string)),
                               ("details", .array(details))]), nil)
    }

    /// A Connect error's `details` (`[{"type": "google.rpc.BadRequest", "value": base64}]`), each
    /// decoded as above; nil when there are none.
    static func read(connectDetails: [Any], code: Int?, message: String?, schema: ProtoSchema?,
                     limits: ProtobufRawDecoder.Limits) -> JSONValue? {
        let details = connectDetails.compactMap { $0 as? [String: Any] }.map { item -> JSONValue in
            let type = item["type"] as? String ?? ""
            guard let value = (item["value"] as? String).flatMap(base64) else {
                return .sortedObject([("type", .string(type)), ("note", .string("value is not base64"))])
            }
            return detail(type: type, value: value, schema: schema, limits: limits)
        }
        guard !details.isEmpty else { return nil }
        return .sortedObject([("code", code.map { .int(Int64($0)) }), ("message", message.map(JSONValue.string)),
                              ("details", .array(details))])
    }

    /// One `google.protobuf.Any`, by its type (other fields are passed over).
    private static func detail(any: ArraySlice<UInt8>, schema: ProtoSchema?,
                               limits: ProtobufRawDecoder.Limits) throws(ProtoWireError) -> JSONValue {
        let packed = try ProtoAny(any)
        return detail(type: packed.typeName, value: Array(packed.value), schema: schema, limits: limits)
    }

    private static func detail(type: String, value: [UInt8], schema: ProtoSchema?,
                               limits: ProtobufRawDecoder.Limits) -> JSONValue {
        let known = schema?.messages[type] != nil ? schema : errorDetails.messages[type] != nil ? errorDetails : nil
        if let known, let typed = try? known.decode(value, as: type) {
            return .sortedObject([("type", .string(type)), ("typed", typed)])
        }
        return .sortedObject([("type", .string(type)), ("decoded", ProtobufRawDecoder(limits: limits).decode(value).json)])
    }

    /// Standard base64 with or without its padding, spaces around it ignored.
    private static func base64(_ text: String) -> [UInt8]? {
        unpaddedBase64Decoded(text.trimmingCharacters(in: .whitespaces).utf8, urlSafe: false)
    }

    /// The `google.rpc` error detail messages (names and field numbers as Google's API design
    /// guide publishes them, https://cloud.google.com/apis/design/errors), written here as
    /// `errorDetailsSource` and compiled by protoc 3.21 into `errorDetailsDescriptorSet` (a test
    /// compiles the source again and compares).
    static let errorDetails = try! ProtoSchema(descriptorSet: Array(Data(base64Encoded: errorDetailsDescriptorSet)!))

    /// `google/rpc/error_details.proto` and the `google/protobuf/duration.proto` it imports, as compiled.
    static let errorDetailsSource: [(path: String, text: String)] = [
        ("google/rpc/error_details.proto", """
            syntax = "proto3";
            package google.rpc;
            import "google/protobuf/duration.proto";
            message ErrorInfo { string reason = 1; string domain = 2; map<string, string> metadata = 3; }
            message RetryInfo { google.protobuf.Duration retry_delay = 1; }
            message DebugInfo { repeated string stack_entries = 1; string detail = 2; }
            message QuotaFailure {
              message Violation { string subject = 1; string description = 2; }
              repeated Violation violations = 1;
            }
            message PreconditionFailure {
              message Violation { string type = 1; string subject = 2; string description = 3; }
              repeated Violation violations = 1;
            }
            message BadRequest {
              message FieldViolation { string field = 1; string description = 2; string reason = 3; LocalizedMessage localized_message = 4; }
              repeated FieldViolation field_violations = 1;
            }
            message RequestInfo { string request_id = 1; string serving_data = 2; }
            message ResourceInfo { string resource_type = 1; string resource_name = 2; string owner = 3; string description = 4; }
            message Help {
              message Link { string description = 1; string url = 2; }
              repeated Link links = 1;
            }
            message LocalizedMessage { string locale = 1; string message = 2; }
            """),
        ("google/protobuf/duration.proto", """
            syntax = "proto3";
            package google.protobuf;
            message Duration { int64 seconds = 1; int32 nanos = 2; }
            """),
    ]

    static let errorDetailsDescriptorSet = """
        CnUKHmdvb2dsZS9wcm90b2J1Zi9kdXJhdGlvbi5wcm90bxIPZ29vZ2xlLnByb3RvYnVmIjoKCER1cmF0aW9uEhgKB3NlY29uZHMY
        ASABKANSB3NlY29uZHMSFAoFbmFub3MYAiABKAVSBW5hbm9zYgZwcm90bzMKqwsKHmdvb2dsZS9ycGMvZXJyb3JfZGV0YWlscy5w
        cm90bxIKZ29vZ2xlLnJwYxoeZ29vZ2xlL3Byb3RvYnVmL2R1cmF0aW9uLnByb3RvIrkBCglFcnJvckluZm8SFgoGcmVhc29uGAEg
        ASgJUgZyZWFzb24SFgoGZG9tYWluGAIgASgJUgZkb21haW4SPwoIbWV0YWRhdGEYAyADKAsyIy5nb29nbGUucnBjLkVycm9ySW5m
        by5NZXRhZGF0YUVudHJ5UghtZXRhZGF0YRo7Cg1NZXRhZGF0YUVudHJ5EhAKA2tleRgBIAEoCVIDa2V5EhQKBXZhbHVlGAIgASgJ
        UgV2YWx1ZToCOAEiRwoJUmV0cnlJbmZvEjoKC3JldHJ5X2RlbGF5GAEgASgLMhkuZ29vZ2xlLnByb3RvYnVmLkR1cmF0aW9uUgpy
        ZXRyeURlbGF5IkgKCURlYnVnSW5mbxIjCg1zdGFja19lbnRyaWVzGAEgAygJUgxzdGFja0VudHJpZXMSFgoGZGV0YWlsGAIgASgJ
        UgZkZXRhaWwimwEKDFF1b3RhRmFpbHVyZRJCCgp2aW9sYXRpb25zGAEgAygLMiIuZ29vZ2xlLnJwYy5RdW90YUZhaWx1cmUuVmlv
        bGF0aW9uUgp2aW9sYXRpb25zGkcKCVZpb2xhdGlvbhIYCgdzdWJqZWN0GAEgASgJUgdzdWJqZWN0EiAKC2Rlc2NyaXB0aW9uGAIg
        ASgJUgtkZXNjcmlwdGlvbiK9AQoTUHJlY29uZGl0aW9uRmFpbHVyZRJJCgp2aW9sYXRpb25zGAEgAygLMikuZ29vZ2xlLnJwYy5Q
        cmVjb25kaXRpb25GYWlsdXJlLlZpb2xhdGlvblIKdmlvbGF0aW9ucxpbCglWaW9sYXRpb24SEgoEdHlwZRgBIAEoCVIEdHlwZRIY
        CgdzdWJqZWN0GAIgASgJUgdzdWJqZWN0EiAKC2Rlc2NyaXB0aW9uGAMgASgJUgtkZXNjcmlwdGlvbiKMAgoKQmFkUmVxdWVzdBJQ
        ChBmaWVsZF92aW9sYXRpb25zGAEgAygLMiUuZ29vZ2xlLnJwYy5CYWRSZXF1ZXN0LkZpZWxkVmlvbGF0aW9uUg9maWVsZFZpb2xh
        dGlvbnMaqwEKDkZpZWxkVmlvbGF0aW9uEhQKBWZpZWxkGAEgASgJUgVmaWVsZBIgCgtkZXNjcmlwdGlvbhgCIAEoCVILZGVzY3Jp
        cHRpb24SFgoGcmVhc29uGAMgASgJUgZyZWFzb24SSQoRbG9jYWxpemVkX21lc3NhZ2UYBCABKAsyHC5nb29nbGUucnBjLkxvY2Fs
        aXplZE1lc3NhZ2VSEGxvY2FsaXplZE1lc3NhZ2UiTwoLUmVxdWVzdEluZm8SHQoKcmVxdWVzdF9pZBgBIAEoCVIJcmVxdWVzdElk
        EiEKDHNlcnZpbmdfZGF0YRgCIAEoCVILc2VydmluZ0RhdGEikAEKDFJlc291cmNlSW5mbxIjCg1yZXNvdXJjZV90eXBlGAEgASgJ
        UgxyZXNvdXJjZVR5cGUSIwoNcmVzb3VyY2VfbmFtZRgCIAEoCVIMcmVzb3VyY2VOYW1lEhQKBW93bmVyGAMgASgJUgVvd25lchIg
        CgtkZXNjcmlwdGlvbhgEIAEoCVILZGVzY3JpcHRpb24ibwoESGVscBIrCgVsaW5rcxgBIAMoCzIVLmdvb2dsZS5ycGMuSGVscC5M
        aW5rUgVsaW5rcxo6CgRMaW5rEiAKC2Rlc2NyaXB0aW9uGAEgASgJUgtkZXNjcmlwdGlvbhIQCgN1cmwYAiABKAlSA3VybCJEChBM
        b2NhbGl6ZWRNZXNzYWdlEhYKBmxvY2FsZRgBIAEoCVIGbG9jYWxlEhgKB21lc3NhZ2UYAiABKAlSB21lc3NhZ2ViBnByb3RvMw==
        """.replacingOccurrences(of: "\n", with: "")
}
