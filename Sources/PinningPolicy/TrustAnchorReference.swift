/// An Android NSC `<certificates src="…" overridePins="…"/>` entry.
public struct TrustAnchorReference: Hashable, Sendable {
    /// Where the anchors come from.
    public enum Store: Hashable, Sendable, CustomStringConvertible {
        /// The platform's pre-installed CAs (`src="system"`).
        case system
        /// CAs the user installed (`src="user"`) — where a debugging proxy's CA usually lives.
        case user
        /// Wi-Fi Alliance CAs (`src="wfa"`).
        case wfa
        /// A bundled resource (`src="@raw/name"`).
        case resource(String)

        /// Parses a `src` attribute value; anything not `system`/`user`/`wfa` is a resource.
        public init(source: String) {
            switch source {
            case "system": self = .system
            case "user": self = .user
            case "wfa": self = .wfa
            default: self = .resource(source)
            }
        }

        public var description: String {
            switch self {
            case .system: return "system"
            case .user: return "user"
            case .wfa: return "wfa"
            case .resource(let name): return name
            }
        }
    }

    public let store: Store
    /// True when a chain ending at one of these anchors skips pin checks.
    public let overridesPins: Bool

    public init(_ store: Store, overridesPins: Bool) {
        self.store = store
        self.overridesPins = overridesPins
    }
}
