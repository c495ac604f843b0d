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

/// A flow's mark: one of six colours (Proxyman's and Charles' highlight colours; mitmproxy's
/// marks are a colour or an emoji).
public enum FlowMark: String, Sendable, CaseIterable {
    case red, orange, yellow, green, blue, purple

    /// The colour `name` names, ignoring case; nil for any other word.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// `red, orange, yellow, green, blue or purple`: what a refusal lists.
    public static var names: String {
        allCases.dropLast().map(\.rawValue).joined(separator: ", ") + " or " + (allCases.last?.rawValue ?? "")
    }
}

/// One change to a flow's note (`SessionStore.setNote`): leave a part as it is, or set it (nil
/// removes it).
public enum FlowNoteChange<Value: Sendable & Equatable>: Sendable, Equatable {
    case keep
    case set(Value?)

    /// The value after the change of `current`.
    func applied(to current: Value?) -> Value? {
        switch self {
        case .keep: current
        case .set(let value): value
        }
    }
}
