import DevProxy
import Foundation

/// What the UI answers: a status, headers and a body, or a stream that takes the connection over
/// (Server-Sent Events).
struct WebResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    /// When set, the head is sent without a length and this writes the body until it returns;
    /// then the connection closes.
    var stream: (@Sendable (ByteStream) -> Void)?

    init(status: Int, headers: [(String, String)] = [], body: [UInt8] = [],
         stream: (@Sendable (ByteStream) -> Void)? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.stream = stream
    }

    /// A JSON answer (`application/json`), never cached.
    static func json(_ text: String, status: Int = 200) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                    body: Array(text.utf8))
    }

    /// A JSON value encoded with `JSONSerialization` (for small, irregular answers).
    static func json(object: Any, status: Int = 200) -> WebResponse {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data("{}".utf8)
        return json(String(decoding: data, as: UTF8.self), status: status)
    }

    /// `{"error": "…"}` with `status`, plus any extra fields (`column` for filters).
    static func error(_ status: Int, _ message: String, extra: [String: Any] = [:]) -> WebResponse {
        var object = extra
        object["error"] = message
        return json(object: object, status: status)
    }

    /// Plain text, never cached.
    static func text(_ text: String, status: Int = 200) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"),
                                              ("Cache-Control", "no-store")], body: Array(text.utf8))
    }

    /// 303 to `location`, optionally setting cookies.
    static func redirect(_ location: String, cookies: [String] = []) -> WebResponse {
        WebResponse(status: 303, headers: [("Location", location), ("Cache-Control", "no-store")]
                    + cookies.map { ("Set-Cookie", $0) })
    }

    /// Bytes to download: `Content-Disposition: attachment` with `filename`.
    static func attachment(_ bytes: [UInt8], filename: String, contentType: String = "application/octet-stream")
        -> WebResponse {
        WebResponse(status: 200, headers: [("Content-Type", contentType), ("Cache-Control", "no-store"),
                                           ("Content-Disposition", "attachment; filename=\"\(filename)\"")],
                    body: bytes)
    }

    /// The first value of header `name`, ignoring case.
    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
