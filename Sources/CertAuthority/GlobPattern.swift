/// A shell-style pattern over host names or URLs: `*` matches any run of characters (dots
/// included), everything else matches itself, case-insensitively.
///
/// `*.example.com` matches `api.example.com` and `a.b.example.com` but not `example.com`;
/// `api.*.example.com` matches `api.eu.example.com`; `*` matches everything.
public struct GlobPattern: Sendable, Hashable, CustomStringConvertible {
    public let pattern: String
    private let pieces: [[UInt8]]

    public init(_ pattern: String) {
        self.pattern = pattern
        self.pieces = pattern.lowercased().split(separator: "*", omittingEmptySubsequences: false).map { Array($0.utf8) }
    }

    public var description: String { pattern }

    /// Whether `text` matches the whole pattern.
    public func matches(_ text: String) -> Bool {
        let subject = Array(text.lowercased().utf8)
        guard pieces.count > 1 else { return subject == pieces[0] }
        // First piece anchors the start, last piece the end, middle pieces match greedily left to right.
        guard let first = pieces.first, let last = pieces.last,
              subject.count >= first.count + last.count,
              subject.starts(with: first), subject.suffix(last.count).elementsEqual(last) else { return false }
        var cursor = first.count
        let limit = subject.count - last.count
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = Self.find(piece, in: subject, from: cursor, before: limit) else { return false }
            cursor = found + piece.count
        }
        return true
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int, before end: Int) -> Int? {
        guard end - start >= needle.count else { return nil }
        for index in start...(end - needle.count) where haystack[index..<index + needle.count].elementsEqual(needle) {
            return index
        }
        return nil
    }
}
