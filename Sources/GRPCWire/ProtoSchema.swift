import Foundation

/// Message, enum and method definitions read from a `FileDescriptorSet` (what `protoc
/// --include_imports --descriptor_set_out=FILE` writes; `google/protobuf/descriptor.proto`), so a
/// gRPC call's messages can be shown with their field names and types (`decode(_:as:)`), as
/// Charles and Proxyman do with descriptor files. Only what decoding needs is kept.
public struct ProtoSchema: Sendable {
    /// A field of a message (`FieldDescriptorProto`).
    public struct Field: Sendable, Equatable {
        public var name: String
        /// The proto3 JSON name (`json_name`, which protoc fills in; the field name otherwise).
        public var jsonName: String
        public var number: Int
        /// `FieldDescriptorProto.Type`: 1 double … 18 sint64.
        public var type: Int
        /// For messages and enums: the full name, without the leading dot.
        public var typeName: String?
        public var repeated: Bool
    }

    /// A message type (`DescriptorProto`); `isMapEntry` for the entries protoc makes for `map<K, V>`.
    public struct Message: Sendable, Equatable {
        public var fields: [Int: Field]
        public var isMapEntry: Bool
    }

    /// A method's request and response types, full names without the leading dot.
    public struct Method: Sendable, Equatable {
        public var input: String
        public var output: String

        public init(input: String, output: String) {
            self.input = input
            self.output = output
        }
    }

    /// By full name (`lab.EchoRequest`, nested ones as `lab.Outer.Inner`).
    public private(set) var messages: [String: Message] = [:]
    /// Enum value names by number, by the enum's full name.
    public private(set) var enums: [String: [Int64: String]] = [:]
    /// By `package.Service/Method`, as a gRPC path names it.
    public private(set) var methods: [String: Method] = [:]

    public init() {}

    /// Reads a `FileDescriptorSet`.
    /// - Throws: `ProtoWireError` when the bytes are not one (a `.proto` source, a truncated file).
    public init(descriptorSet bytes: [UInt8]) throws(ProtoWireError) {
        var files = 0
        do throws(ProtoWireError) {
            var reader = ProtoWireReader(bytes[...])
            while let (number, value) = try reader.next() {
                guard number == 1, case .bytes(let file) = value else {
                    throw ProtoWireError("field \(number) at the top level")
                }
                try readFile(file)
                files += 1
            }
        } catch {
            throw ProtoWireError("not a FileDescriptorSet: \(error.reason)")
        }
        guard files > 0 else { throw ProtoWireError("not a FileDescriptorSet: no file in it") }
    }

    /// Adds `other`'s definitions (a later file's win on the same name).
    public mutating func merge(_ other: ProtoSchema) {
        messages.merge(other.messages) { $1 }
        enums.merge(other.enums) { $1 }
        methods.merge(other.methods) { $1 }
    }

    public var isEmpty: Bool { messages.isEmpty && methods.isEmpty }

    /// The method a gRPC path (`/package.Service/Method`) calls, when the schema defines it.
    public func method(path: String) -> Method? {
        guard let grpc = GRPCPath(path) else { return nil }
        return methods["\(grpc.service)/\(grpc.method)"]
    }

    // MARK: - descriptor.proto

    private mutating func readFile(_ bytes: ArraySlice<UInt8>) throws(ProtoWireError) {
        var package = ""
        var messageBlocks: [ArraySlice<UInt8>] = []
        var enumBlocks: [ArraySlice<UInt8>] = []
        var serviceBlocks: [ArraySlice<UInt8>] = []
        var reader = ProtoWireReader(bytes)
        while let (number, value) = try reader.next() {
            guard case .bytes(let block) = value else { continue }
            switch number {
            case 2: package = Self.text(block)
            case 4: messageBlocks.append(block)
            case 5: enumBlocks.append(block)
            case 6: serviceBlocks.append(block)
            default: break
            }
        }
        let prefix = package.isEmpty ? "" : package + "."
        for block in messageBlocks { try readMessage(block, prefix: prefix, depth: 0) }
        for block in enumBlocks { try readEnum(block, prefix: prefix) }
        for block in serviceBlocks { try readService(block, prefix: prefix) }
    }

    private mutating func readMessage(_ bytes: ArraySlice<UInt8>, prefix: String, depth: Int) throws(ProtoWireError) {
        // Each level is a few bytes: a hostile file could otherwise nest deeper than the stack.
        guard depth < Self.maxDepth else { throw ProtoWireError("message types nested more than \(Self.maxDepth) deep") }
        var name = ""
        var fieldBlocks: [ArraySlice<UInt8>] = []
        var nested: [ArraySlice<UInt8>] = []
        var nestedEnums: [ArraySlice<UInt8>] = []
        var isMapEntry = false
        var reader = ProtoWireReader(bytes)
        while let (number, value) = try reader.next() {
            guard case .bytes(let block) = value else { continue }
            switch number {
            case 1: name = Self.text(block)
            case 2: fieldBlocks.append(block)
            case 3: nested.append(block)
            case 4: nestedEnums.append(block)
            case 7:
                // MessageOptions.map_entry (7).
                var options = ProtoWireReader(block)
                while let (option, flag) = try options.next() {
                    if option == 7, case .varint(let set) = flag { isMapEntry = set != 0 }
                }
            default: break
            }
        }
        let fullName = prefix + name
        var fields: [Int: Field] = [:]
        for block in fieldBlocks {
            let field = try Self.readField(block)
            fields[field.number] = field
        }
        messages[fullName] = Message(fields: fields, isMapEntry: isMapEntry)
        for block in nested { try readMessage(block, prefix: fullName + ".", depth: depth + 1) }
        for block in nestedEnums { try readEnum(block, prefix: fullName + ".") }
    }

    private static func readField(_ bytes: ArraySlice<UInt8>) throws(ProtoWireError) -> Field {
        var field = Field(name: "", jsonName: "", number: 0, type: 0, typeName: nil, repeated: false)
        var reader = ProtoWireReader(bytes)
        while let (number, value) = try reader.next() {
            switch (number, value) {
            case (1, .bytes(let block)): field.name = text(block)
            case (3, .varint(let value)): field.number = Int(truncatingIfNeeded: value)
            case (4, .varint(let value)): field.repeated = value == 3
            case (5, .varint(let value)): field.type = Int(truncatingIfNeeded: value)
            case (6, .bytes(let block)):
                let name = text(block)
                field.typeName = name.hasPrefix(".") ? String(name.dropFirst()) : name
            case (10, .bytes(let block)): field.jsonName = text(block)
            default: break
            }
        }
        if field.jsonName.isEmpty { field.jsonName = field.name }
        return field
    }

    private mutating func readEnum(_ bytes: ArraySlice<UInt8>, prefix: String) throws(ProtoWireError) {
        var name = ""
        var values: [Int64: String] = [:]
        var reader = ProtoWireReader(bytes)
        while let (number, value) = try reader.next() {
            guard case .bytes(let block) = value else { continue }
            if number == 1 { name = Self.text(block) }
            guard number == 2 else { continue }
            var valueName = ""
            var valueNumber: Int64 = 0
            var entry = ProtoWireReader(block)
            while let (field, item) = try entry.next() {
                if field == 1, case .bytes(let text) = item { valueName = Self.text(text) }
                if field == 2, case .varint(let raw) = item { valueNumber = Int64(Int32(truncatingIfNeeded: raw)) }
            }
            // The first name given to a number is the one JSON uses (aliases come after).
            if values[valueNumber] == nil { values[valueNumber] = valueName }
        }
        enums[prefix + name] = values
    }

    private mutating func readService(_ bytes: ArraySlice<UInt8>, prefix: String) throws(ProtoWireError) {
        var name = ""
        var methodBlocks: [ArraySlice<UInt8>] = []
        var reader = ProtoWireReader(bytes)
        while let (number, value) = try reader.next() {
            guard case .bytes(let block) = value else { continue }
            if number == 1 { name = Self.text(block) }
            if number == 2 { methodBlocks.append(block) }
        }
        for block in methodBlocks {
            var method = ""
            var input = ""
            var output = ""
            var entry = ProtoWireReader(block)
            while let (number, value) = try entry.next() {
                guard case .bytes(let text) = value else { continue }
                let string = Self.text(text)
                switch number {
                case 1: method = string
                case 2: input = string.hasPrefix(".") ? String(string.dropFirst()) : string
                case 3: output = string.hasPrefix(".") ? String(string.dropFirst()) : string
                default: break
                }
            }
            methods["\(prefix)\(name)/\(method)"] = Method(input: input, output: output)
        }
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
