import DevProxy
import Foundation
import SessionStore

/// gRPC calls recorded without their messages' types, typed when `GET /api/flows/ID` reads them
/// and when a HAR export writes them (`WebUIConfiguration.grpcSchema`,
/// `Flow.typed(by:requestBody:responseBody:note:)`).
extension WebUI {
    /// `record` (flow `id`'s stored record) with its gRPC messages typed by the schema the UI has
    /// for its server, when it has one that defines the call's method and the store kept the
    /// bodies; `record` itself otherwise. Only a gRPC call's record is decoded here.
    func typedLater(_ record: String, id: String) throws -> String {
        guard let schemas = configuration.grpcSchema, record.contains("\"grpc\":{"),
              let flow = FlowLogReader.parse(Array(record.utf8)).flows.first,
              let schema = schemas(flow.server.host, flow.server.port), flow.wantsTypes(from: schema) else { return record }
        let request = try store.body(id: id, part: .request)?.bytes
        let response = try store.body(id: id, part: .response)?.bytes
        return flow.typed(by: schema, requestBody: request, responseBody: response)?.recordText ?? record
    }

    /// `flow` as a HAR export writes it: a gRPC call recorded without its messages' types typed,
    /// as `typedLater` shows it, when the UI has a schema for its server now.
    func typedForHAR(_ flow: Flow) throws -> Flow {
        guard let schemas = configuration.grpcSchema, flow.grpc != nil,
              let schema = schemas(flow.server.host, flow.server.port), flow.wantsTypes(from: schema)
        else { return flow }
        let request = try store.body(id: flow.id, part: .request)?.bytes
        let response = try store.body(id: flow.id, part: .response)?.bytes
        return flow.typed(by: schema, requestBody: request, responseBody: response, note: Flow.typedInHARNote) ?? flow
    }
}
