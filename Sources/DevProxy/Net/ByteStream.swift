/// A bidirectional byte stream: a plain socket or TLS over one. The engine reads and writes
/// through this so HTTP handling is the same for `http://` and decrypted `https://`.
public protocol ByteStream: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes; 0 means the peer closed.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// Reads what has arrived without waiting: nil when nothing has, 0 when the peer closed.
    func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Int?
    /// Writes all of `bytes`; with `flush: false` the stream may hold them in a buffer until a
    /// later write or `flush()` (so a streamed body leaves in fewer, larger writes).
    func write(_ bytes: UnsafeRawBufferPointer, flush: Bool) throws
    /// Sends whatever `write(_:flush: false)` left buffered.
    func flush() throws
    /// Whether a read would return data now, without waiting on the network.
    var inputReady: Bool { get }
    /// Bytes buffered inside the stream that `poll()` on the socket cannot see.
    var pending: Int { get }
    /// The socket underneath.
    var socket: Socket { get }
    /// Closes the stream (TLS sends close_notify first).
    func close()
    /// Frees buffers an idle stream need not hold; the next read or write makes new ones.
    func releaseBuffers()
    /// Says this side will send no more (TCP FIN; TLS sends close_notify first), the read side
    /// left open: a relay passes one peer's end on to the other.
    func closeWrite()
}

extension ByteStream {
    /// Nothing to free by default.
    public func releaseBuffers() {}

    /// A FIN by default.
    public func closeWrite() { socket.shutdownWrite() }

    /// Writes all of `bytes` and sends them at once.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try write(bytes, flush: true)
    }

    /// Writes a byte array and sends it at once.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0, flush: true) }
    }

    /// Writes a byte array; see `write(_:flush:)`.
    public func write(_ bytes: [UInt8], flush: Bool) throws {
        try bytes.withUnsafeBytes { try write($0, flush: flush) }
    }
}

/// A plain TCP stream.
public final class PlainStream: ByteStream {
    public let socket: Socket

    public init(_ socket: Socket) {
        self.socket = socket
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { try socket.read(into: buffer) }
    public func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws -> Int? { try socket.readAvailable(into: buffer) }
    public func write(_ bytes: UnsafeRawBufferPointer, flush: Bool) throws { try socket.write(bytes) }
    public func flush() throws {}
    public var inputReady: Bool { socket.queuedBytes > 0 }
    public var pending: Int { 0 }
    public func close() { socket.close() }
}

extension TLSConnection: ByteStream {}
