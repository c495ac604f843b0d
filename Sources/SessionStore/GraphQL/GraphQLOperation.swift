/// One GraphQL operation a request asked for: its type and name, as the list shows it
/// (`query GetUser`).
public struct GraphQLOperation: Sendable, Equatable {
    /// The operation's type (GraphQL spec, "Operations").
    public enum Kind: String, Sendable, CaseIterable {
        case query, mutation, subscription
    }

    /// Nil when the request sent no document to read it from (an Apollo persisted query sent by
    /// its hash alone).
    public var kind: Kind?
    /// The request's `operationName`, else the operation's own name; nil for an anonymous one.
    public var name: String?
    /// True when the request names a persisted query (Apollo's `extensions.persistedQuery`).
    public var persisted: Bool

    public init(kind: Kind?, name: String?, persisted: Bool = false) {
        self.kind = kind
        self.name = name
        self.persisted = persisted
    }
}

/// What the store knows of a GraphQL call: the operations its request asked for (several in a
/// batch) and how many errors its response reported.
public struct GraphQLCall: Sendable, Equatable {
    /// One for a single request, one per entry of a batched (JSON array) request.
    public var operations: [GraphQLOperation]
    /// The entries of the response's top-level `errors` (summed over a batch's responses); nil
    /// when there is no JSON response to read them from.
    public var errors: Int?

    public init(operations: [GraphQLOperation], errors: Int? = nil) {
        self.operations = operations
        self.errors = errors
    }
}
