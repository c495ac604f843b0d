import Foundation
import GRPCWire
import HTTPTypes

/// A gRPC call recorded without its messages' types, typed when it is looked at: by a schema the
/// viewer has now (`devproxy web FILE --proto`, or a `--grpc-reflection` answer that came after the
/// call), from the bodies the session store kept, as Charles's and Proxyman's descriptor mappings
/// apply to traffic already captured.
extension Flow {
    /// Whether this call's gRPC view has protobuf messages without a type, of a method `schema`
    /// defines.
    public func wantsTypes(from schema: ProtoSchema) -> Bool {
        guard let grpc, grpc.messages.contains(where: { $0.typed == nil && $0.messageType == nil }),
              let path = callPath, schema.method(path: path) != nil,
              GRPCFlowRecorder.wireFormat(contentType: request?.headers.first(named: "content-type")) != nil
        else { return false }
        return true
    }

    /// `/pkg.Service/Method`, the request URL's path.
    private var callPath: String? {
        guard let url = request?.url, let scheme = url.range(of: "://") else { return nil }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        return String(rest[slash...].prefix { $0 != "?" })
    }

    /// This flow with the messages it recorded without a type typed by `schema`, read again from
    /// `requestBody` and `responseBody` (the bodies as on the wire, as the store keeps them); nil
    /// when nothing changed (no body, or the bodies' messages do not line up with the record's).
    /// `note` goes among the call's `grpc.notes` to say when the types came.
    public func typed(by schema: ProtoSchema, requestBody: [UInt8]?, responseBody: [UInt8]?,
                      note: String = typedLaterNote) -> Flow? {
        guard wantsTypes(from: schema), let path = callPath, let request, var grpc,
              let format = GRPCFlowRecorder.wireFormat(contentType: request.headers.first(named: "content-type"))
        else { return nil }
        var recorder = GRPCFlowRecorder(path: path, requestHeaders: Self.pairs(request.headers), format: format,
                                        decompressor: GRPCContentDecompressor(), schema: schema)
        if let requestBody, !requestBody.isEmpty { recorder.requestBody(requestBody) }
        if let response {
            recorder.responseHead(headers: Self.pairs(response.headers), status: response.status)
            if let responseBody, !responseBody.isEmpty { recorder.responseBody(responseBody) }
            if let trailers = response.trailers { recorder.responseTrailers(Self.pairs(trailers)) }
        }
        let again = recorder.finish().messages
        var changed = false
        for index in grpc.messages.indices where index < again.count {
            let old = grpc.messages[index], new = again[index]
            // The same bytes split the same way, or the record is not this body's: leave it.
            guard old.direction == new.direction, old.length == new.length else { return nil }
            guard old.typed == nil, old.messageType == nil, new.messageType != nil else { continue }
            grpc.messages[index].messageType = new.messageType
            grpc.messages[index].typed = new.typed
            if let note = new.note, new.typed == nil { grpc.messages[index].note = note }
            changed = true
        }
        guard changed else { return nil }
        grpc.notes.append(note)
        var flow = self
        flow.grpc = grpc
        return flow
    }

    /// This flow typed by `schema` as `typed(by:requestBody:responseBody:)` does, from the bodies
    /// its record kept (the flow log's part of each, `--body-limit`): for the HAR `devproxy run
    /// --har` writes at exit, once `--grpc-reflection` answers have come.
    public func typedFromRecord(by schema: ProtoSchema, note: String = typedInHARNote) -> Flow? {
        guard wantsTypes(from: schema) else { return nil }
        return typed(by: schema, requestBody: request?.body?.loggedBytes, responseBody: response?.body?.loggedBytes,
                     note: note)
    }

    /// The note a call typed when looked at carries: its flow log line has no types.
    public static let typedLaterNote = "messages typed when shown, by a schema that came after the call "
        + "(--proto given to devproxy web, a --grpc-reflection answer, or one its session kept); "
        + "the flow log has them untyped"

    /// The note a call typed when its HAR entry was written carries (`run --har` at exit, an export
    /// from the web UI).
    public static let typedInHARNote = "messages typed when this HAR was written, by a schema that came after the call "
        + "(a --grpc-reflection answer, --proto given to devproxy web, or one its session kept); "
        + "the flow log has them untyped"

    /// The record as the flow log writes it, one line of JSON.
    public var recordText: String { String(decoding: jsonBytes, as: UTF8.self) }

    private static func pairs(_ fields: FieldPairs) -> [(name: String, value: String)] {
        fields.indices.map { (fields.name(at: $0), fields.value(at: $0)) }
    }
}
