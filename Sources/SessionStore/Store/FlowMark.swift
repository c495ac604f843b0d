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
