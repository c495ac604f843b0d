/// What a person noted on a flow while debugging: a coloured mark and a comment, as mitmproxy's
/// `m` (marks) and Proxyman's highlight colours and comments let them.
///
/// Kept in the session file beside the flow (`flow_notes`), never in its record: the record is
/// what the proxy saw, the note what the person thought of it.
public struct FlowNote: Sendable, Equatable {
    /// The longest comment a flow keeps, in characters.
    public static let maximumCommentLength = 2_000

    public var mark: FlowMark?
    /// Never empty: an empty comment is no comment.
    public var comment: String?

    public init(mark: FlowMark? = nil, comment: String? = nil) {
        self.mark = mark
        self.comment = comment?.isEmpty == true ? nil : comment
    }

    /// Whether the note says nothing (its row is then deleted).
    public var isEmpty: Bool { mark == nil && comment == nil }

    /// Why `comment` cannot be kept, or nil when it can.
    public static func refusal(ofComment comment: String) -> String? {
        guard comment.count > maximumCommentLength else { return nil }
        return "a comment is at most \(maximumCommentLength) characters, not \(comment.count)"
    }
}
