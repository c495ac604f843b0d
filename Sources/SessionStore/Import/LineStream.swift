import Foundation

/// The lines of a file or a pipe, read a piece at a time: a flow log of any size is imported with
/// one line in memory, not the whole file (which a 2 GiB log needed, and `devproxy web /dev/zero`
/// grew without end).
struct LineStream {
    /// The longest line read: far above what `--body-limit`'s default writes (a 1 MiB body is
    /// under 1.4 MiB of base64), and the bound on what one line may take in memory.
    static let defaultLineLimit = 256 << 20

    private let descriptor: Int32
    private let lineLimit: Int
    private var buffer: [UInt8]
    private var start = 0
    private var ended = false
    private var chunk = [UInt8](repeating: 0, count: 1 << 20)
    /// Lines returned so far: the number of the last one.
    private(set) var number = 0

    /// - Parameter descriptor: read until end of file; not closed here.
    init(descriptor: Int32, lineLimit: Int = defaultLineLimit) {
        self.descriptor = descriptor
        self.buffer = []
        self.lineLimit = lineLimit
    }

    /// The first `count` bytes not yet returned (fewer at the end), left to be read: what a pipe
    /// sends is looked at (its format told) and then imported, without reading it twice.
    mutating func peek(_ count: Int) throws -> ArraySlice<UInt8> {
        while buffer.count - start < count, !ended { try fill() }
        return buffer[start..<min(buffer.count, start + count)]
    }

    /// The next line without its newline, and whether it had one (a last line may not); nil at
    /// the end.
    /// - Throws: `SessionStoreError(.importFormat)` for a line longer than the limit (nothing of
    ///   it is kept), `.open` when reading fails.
    mutating func next() throws -> (line: ArraySlice<UInt8>, terminated: Bool)? {
        var searched = start
        while true {
            if let newline = Self.newline(in: buffer, from: searched) {
                let line = buffer[start..<newline]
                start = newline + 1
                number += 1
                return (line, true)
            }
            searched = buffer.count
            if ended {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                number += 1
                return (line, false)
            }
            guard buffer.count - start <= lineLimit else {
                throw SessionStoreError(.importFormat, "line \(number + 1) is longer than \(lineLimit >> 20) MiB: not a "
                                        + "flow log this devproxy reads")
            }
            if start > 0, start >= buffer.count / 2 {
                buffer.removeSubrange(..<start)
                searched -= start
                start = 0
            }
            try fill()
        }
    }

    /// Everything not yet returned, to the end, whatever its size (a document parsed whole).
    mutating func remainder() throws -> ArraySlice<UInt8> {
        while !ended { try fill() }
        defer { start = buffer.count }
        return buffer[start...]
    }

    /// Where the first newline at or after `from` is (memchr: a byte at a time took seconds a
    /// 256 MiB line in a debug build).
    private static func newline(in buffer: [UInt8], from: Int) -> Int? {
        guard from < buffer.count else { return nil }
        return buffer.withUnsafeBytes { raw in
            memchr(raw.baseAddress! + from, 0x0A, raw.count - from).map { UnsafeRawPointer($0) - raw.baseAddress! }
        }
    }

    /// Appends the next piece read, or marks the end.
    private mutating func fill() throws {
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SessionStoreError(.open, "cannot read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { ended = true } else { buffer.append(contentsOf: chunk[..<count]) }
            return
        }
    }
}
