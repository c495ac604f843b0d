import Foundation
import HTTP1

/// One request to the UI, head and (bounded) body read whole.
struct WebRequest: Sendable {
    let method: String
    /// The path, percent-decoded, without the query.
    let path: String
    /// The query's parameters, percent-decoded (`+` is a space); the first of repeated names.
    let query: [String: String]
    let headers: HTTPHeaders
    let body: [UInt8]
    /// The query string as sent, without `?` (for redirects that keep all but the token).
    let rawQuery: String?

    init(head: HTTPRequestHead, body: [UInt8]) {
        method = head.method
        headers = head.headers
        self.body = body
        let target = head.target
        let question = target.firstIndex(of: "?")
        let rawPath = question.map { String(target[..<$0]) } ?? target
        path = rawPath.removingPercentEncoding ?? rawPath
        rawQuery = question.map { String(target[target.index(after: $0)...]) }
        query = Self.parseQuery(rawQuery ?? "")
    }

    /// `a=1&b=x+y` → `["a": "1", "b": "x y"]`.
    static func parseQuery(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard result[name] == nil else { continue }
            result[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return result
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// The path's segments: `/api/flows/x/replay` → `["api", "flows", "x", "replay"]`.
    var segments: [String] { path.split(separator: "/", omittingEmptySubsequences: true).map(String.init) }

    /// Whether the method changes state (and so needs the CSRF checks).
    var isStateChanging: Bool { ["POST", "PUT", "PATCH", "DELETE"].contains(method) }
}
