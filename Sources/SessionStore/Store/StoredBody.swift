/// A request or response body as the store keeps it: up to the store's body limit of the bytes,
/// plus the size and SHA-256 of the whole (as the flow log does for its smaller limit).
public struct StoredBody: Sendable, Equatable {
    /// Which message a body belongs to.
    public enum Part: Int, Sendable {
        case request = 0
        case response = 1
    }

    /// The kept bytes, as on the wire (after de-chunking, before content decoding).
    public var bytes: [UInt8]
    /// The size of the whole body on the wire.
    public var size: Int
    /// SHA-256 of the whole body, hex; nil when the source did not say (HAR files).
    public var sha256: String?
    /// The body as text, decoded from its content coding, when it is text (the flow log's
    /// `body.text`): what `~b` searches. Nil for binary bodies, which `~b` searches as bytes.
    public var text: String?
    /// True when `bytes` holds less than `size`.
    public var truncated: Bool { bytes.count < size }
    /// More of the body than `bytes` (which then hold the flow log's part), waiting in the spool:
    /// the store's writer keeps this instead, up to the store's limit.
    public var spooled: SpooledBody?

    public init(bytes: [UInt8], size: Int? = nil, sha256: String? = nil, text: String? = nil) {
        self.bytes = bytes
        // A negative size (a HAR's `bodySize: -1`, "unknown"; a hand-edited log) trapped the writer.
        self.size = size.flatMap { $0 >= 0 ? $0 : nil } ?? bytes.count
        self.sha256 = sha256
        self.text = text
    }

    /// The SHA-256 of no bytes, hex.
    static let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// An empty body exactly as a reader rebuilds it from a flow whose size for its part is 0
    /// (`SessionStore.emptyBody`): the writer stores no row for it.
    static let empty = StoredBody(bytes: [], size: 0, sha256: emptySHA256, text: "")

    /// Whether this is exactly `StoredBody.empty` (nothing spooled), which reads back the same
    /// with no row.
    var isEmptyAsStored: Bool { self == Self.empty }

    /// This body cut to `limit` bytes; size and hash still describe the whole.
    func limited(to limit: Int) -> StoredBody {
        guard bytes.count > limit else { return self }
        var body = self
        body.bytes = Array(bytes.prefix(limit))
        if let text, text.utf8.count > limit {
            // Text decoded from a compressed body can be larger than its bytes: cut on a character.
            let scalars = text.unicodeScalars
            var end = scalars.startIndex
            var kept = 0
            while end < scalars.endIndex, kept + UTF8.width(scalars[end]) <= limit {
                kept += UTF8.width(scalars[end])
                scalars.formIndex(after: &end)
            }
            body.text = String(scalars[..<end])
        }
        return body
    }
}
