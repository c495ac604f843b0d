/// What the caller of `SOCKS5Handshake` does next.
public enum SOCKS5Action: Hashable, Sendable {
    /// Write these bytes to the client.
    case send([UInt8])
    /// Read more from the client and `feed` it.
    case needMore
    /// Connect to the target, then call `connected(bound:)` or `connectFailed(_:reason:)`.
    /// Keep feeding what the client sends meanwhile; it is held for `.established`.
    case connect(SOCKS5Target)
    /// The tunnel is open: relay both ways. `firstBytes` are what the client sent after its
    /// request, to be forwarded to the target first (often empty).
    case established(firstBytes: [UInt8])
    /// Bytes fed after `.established`: forward them to the target.
    case relay([UInt8])
    /// Write `failure.bytes` (if any) and close. It can follow `.connect` when the client sends
    /// more than `maximumEarlyData` before the tunnel opens: abandon that connection too.
    case fail(SOCKS5Failure)
}
