/// Why a gRPC record could not be read back from JSON.
public struct GRPCJSONError: Error, Sendable, Equatable {
    public var reason: String

    public init(reason: String) {
        self.reason = reason
    }
}

/// Typed reads of an object's fields, failing with the field's path.
struct JSONReader {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, _ path: String) {
        self.value = value
        self.path = path
    }

    func optional<T>(_ key: String, _ read: (JSONValue) -> T?) throws -> T? {
        guard let field = value[key], field != .null else { return nil }
        guard let typed = read(field) else { throw GRPCJSONError(reason: "\(path).\(key) has the wrong type") }
        return typed
    }

    func required<T>(_ key: String, _ read: (JSONValue) -> T?) throws -> T {
        guard let typed = try optional(key, read) else { throw GRPCJSONError(reason: "\(path).\(key) is missing") }
        return typed
    }

    func optionalArray(_ key: String) throws -> [JSONValue] {
        try optional(key) { if case .array(let values) = $0 { values } else { nil } } ?? []
    }

    func array(_ key: String) throws -> [JSONValue] {
        try required(key) { if case .array(let values) = $0 { values } else { nil } }
    }

    func string() throws -> String {
        guard let text = value.stringValue else { throw GRPCJSONError(reason: "\(path) has a non-string") }
        return text
    }
}

extension JSONValue {
    var stringValue: String? { if case .string(let text) = self { text } else { nil } }
    var boolValue: Bool? { if case .bool(let flag) = self { flag } else { nil } }
    /// A number as a Double; the encoder's spellings of non-finite values read back too.
    var doubleValue: Double? {
        switch self {
        case .double(let value): return value
        case .int(let value): return Double(value)
        case .uint(let value): return Double(value)
        case .string(let text): return ["NaN": .nan, "Infinity": .infinity, "-Infinity": -.infinity][text]
        default: return nil
        }
    }
}
