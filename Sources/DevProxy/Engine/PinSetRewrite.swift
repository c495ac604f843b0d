import CertAuthority
import Foundation

/// `--pinset-rewrite URL_GLOB`: remote pin-set responses (`/.well-known/pins.json`, holding
/// `hashes`) that DevProxy rewrites in flight so they also hold the team root's pin, keeping
/// their other fields. For QA: an app that accepts such a set can have its pins replaced by
/// anyone who intercepts the fetch (`qa verdict` reports `pinset_injectable`).
public struct PinSetRewrite: Sendable {
    /// URLs whose responses are rewritten (`*` matches any run of characters).
    public let patterns: [GlobPattern]
    /// Bare base64 pins added to `hashes` (the team root's).
    public let pins: [String]
    /// Largest body buffered to rewrite; a larger one passes through untouched with a note.
    /// Default 1 MiB: pin sets are a few hundred bytes.
    public var limit = 1 << 20

    public init(patterns: [GlobPattern], pins: [String]) {
        self.patterns = patterns
        self.pins = pins
    }

    /// Whether the response to `url` is one to rewrite.
    public func matches(_ url: String) -> Bool {
        patterns.contains { $0.matches(url) }
    }
}
