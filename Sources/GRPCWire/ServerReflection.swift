/// gRPC server reflection's messages (grpc/grpc `reflection/v1/reflection.proto`; v1alpha's are
/// the same messages under another package): what `devproxy run --grpc-reflection` asks a server
/// for a service's `.proto` files, and what it reads back, as grpcurl and Postman ask it.
///
/// One call to `ServerReflectionInfo` (a bidirectional stream) carries any number of requests;
/// the server answers each in order.
public enum ServerReflection {
    /// The method's path in each version, newest first: grpc-go and grpc-java serve both,
    /// grpcio (Python) and older servers only v1alpha.
    public static let paths = ["/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
                               "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"]

    /// The services a reflection client calls: a call to them never asks for their own schema.
    public static let services: Set<String> = ["grpc.reflection.v1.ServerReflection",
                                              "grpc.reflection.v1alpha.ServerReflection"]

    /// What one request asks for.
    public enum Query: Sendable, Equatable {
        /// The file that defines a symbol (`pkg.Service`, `pkg.Message`), with its dependencies
        /// (most servers send them too).
        case fileContainingSymbol(String)
        /// A file by its name (`google/protobuf/timestamp.proto`), for a dependency not sent.
        case fileByFilename(String)
    }

    /// `ServerReflectionRequest { string host = 1; oneof { string file_by_filename = 3;
    /// string file_containing_symbol = 4; … } }`, gRPC-framed (uncompressed), one after another.
    public static func requestBody(host: String, queries: [Query]) -> [UInt8] {
        queries.flatMap { query in
            var message = ProtoWireWriter()
            message.lengthDelimited(1, Array(host.utf8))
            switch query {
            case .fileByFilename(let name): message.lengthDelimited(3, Array(name.utf8))
            case .fileContainingSymbol(let symbol): message.lengthDelimited(4, Array(symbol.utf8))
            }
            return GRPCWireMessage.framed(message.bytes)
        }
    }

    /// What the server answered to the requests of one call.
    public struct Answer: Sendable, Equatable {
        /// Serialized `FileDescriptorProto`s, in the order they came (duplicates left out).
        public var files: [[UInt8]] = []
        /// `ErrorResponse`s: `NOT_FOUND (5): symbol not found: pkg.Gone`.
        public var errors: [String] = []
    }

    /// Reads a response body: gRPC frames of `ServerReflectionResponse { … oneof {
    /// FileDescriptorResponse file_descriptor_response = 4 (repeated bytes file_descriptor_proto = 1);
    /// ErrorResponse error_response = 7 (int32 error_code = 1; string error_message = 2); … } }`.
    /// - Throws: `ProtoWireError` for a body that is not that (a compressed or cut frame).
    public static func answer(_ body: [UInt8]) throws(ProtoWireError) -> Answer {
        var answer = Answer()
        var seen: Set<[UInt8]> = []
        var offset = 0
        while offset < body.count {
            guard body.count - offset >= 5 else { throw ProtoWireError("a gRPC frame's prefix is cut at byte \(offset)") }
            guard body[offset] == 0 else { throw ProtoWireError("a compressed frame (none was asked for)") }
            let length = body[offset + 1 ..< offset + 5].reduce(0) { $0 << 8 | Int($1) }
            guard length <= body.count - offset - 5 else { throw ProtoWireError("a gRPC frame of \(length) bytes is cut") }
            let message = body[offset + 5 ..< offset + 5 + length]
            offset += 5 + length
            var reader = ProtoWireReader(message)
            while let (number, value) = try reader.next() {
                guard case .bytes(let block) = value else { continue }
                if number == 4 {
                    var files = ProtoWireReader(block)
                    while let (field, file) = try files.next() {
                        if field == 1, case .bytes(let bytes) = file, seen.insert(Array(bytes)).inserted {
                            answer.files.append(Array(bytes))
                        }
                    }
                } else if number == 7 {
                    answer.errors.append(try errorText(block))
                }
            }
        }
        return answer
    }

    private static func errorText(_ block: ArraySlice<UInt8>) throws(ProtoWireError) -> String {
        var code: UInt64 = 0
        var message = ""
        var reader = ProtoWireReader(block)
        while let (number, value) = try reader.next() {
            switch (number, value) {
            case (1, .varint(let value)): code = value
            case (2, .bytes(let text)): message = String(decoding: text, as: UTF8.self)
            default: break
            }
        }
        let name = GRPCStatus.name(of: Int(truncatingIfNeeded: code)).map { "\($0) (\(code))" } ?? "code \(code)"
        return message.isEmpty ? name : "\(name): \(message)"
    }

    /// A `FileDescriptorProto`'s `name` (1) and `dependency` list (3).
    public static func nameAndDependencies(of file: [UInt8]) throws(ProtoWireError) -> (name: String, dependencies: [String]) {
        var name = ""
        var dependencies: [String] = []
        var reader = ProtoWireReader(file[...])
        while let (number, value) = try reader.next() {
            guard case .bytes(let text) = value else { continue }
            if number == 1 { name = String(decoding: text, as: UTF8.self) }
            if number == 3 { dependencies.append(String(decoding: text, as: UTF8.self)) }
        }
        return (name, dependencies)
    }

    /// The `FileDescriptorSet` of `files` (`repeated FileDescriptorProto file = 1`), as
    /// `ProtoSchema(descriptorSet:)` reads it.
    public static func descriptorSet(_ files: [[UInt8]]) -> [UInt8] {
        var set = ProtoWireWriter()
        for file in files { set.lengthDelimited(1, file) }
        return set.bytes
    }
}
