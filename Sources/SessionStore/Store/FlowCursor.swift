/// Where a page of flows continues: after the flow with this sequence number, in the page's order.
///
/// Stable while flows keep arriving: a cursor names a position, not an offset, so new flows never
/// shift the pages after it.
public struct FlowCursor: Sendable, Hashable, CustomStringConvertible {
    /// The last sequence number of the previous page.
    public var sequence: Int64

    public init(sequence: Int64) { self.sequence = sequence }

    /// Parses the API's `cursor=` text; nil when it is not one.
    public init?(_ text: String) {
        guard let sequence = Int64(text), sequence >= 0 else { return nil }
        self.sequence = sequence
    }

    /// The API's spelling: the sequence number in decimal.
    public var description: String { String(sequence) }
}
