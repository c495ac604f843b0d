/// The service and method a gRPC request names in its `:path`: `/pkg.Service/Method`.
///
/// PROTOCOL-HTTP2.md: `Path → ":path" "/" Service-Name "/" {method name}`, where the service
/// name is the fully qualified proto service (`package.Service`, or `Service` without a package).
public struct GRPCPath: Sendable, Hashable {
    /// `pkg.Service`.
    public let service: String
    /// `Method`.
    public let method: String

    /// - Returns: `nil` unless `path` is `/` service `/` method, both non-empty, with no query,
    ///   fragment or further `/`.
    public init?(_ path: String) {
        guard path.first == "/" else { return nil }
        let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
              !path.contains(where: { $0 == "?" || $0 == "#" || $0.isWhitespace }) else { return nil }
        service = String(parts[0])
        method = String(parts[1])
    }
}
