/// The kinds of failure a run counts, one counter each in the report.
enum ErrorKind: String, CaseIterable, Sendable {
    /// TCP connect refused, unreachable or reset before anything was sent.
    case connect
    /// TLS handshake failed, including certificate verification.
    case tls
    /// The proxy refused or garbled the CONNECT exchange.
    case proxy
    /// A response arrived with a status outside 200–399.
    case http
    /// An operation did not finish within `--timeout`.
    case timeout
    /// The connection broke mid-exchange (reset, early close, unparseable response).
    case io
}

/// A failure of one connection or one exchange; counted, never fatal to the run.
struct LoadError: Error, Sendable, CustomStringConvertible {
    var kind: ErrorKind
    /// What happened, for `--json`'s first-error sample and the text report.
    var reason: String

    var description: String { "\(kind.rawValue): \(reason)" }
}

/// A problem that stops the run before it starts (bad CA file, unresolvable host).
struct SetupError: Error, CustomStringConvertible {
    var description: String
}
