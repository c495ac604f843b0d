import Foundation

/// A recorded request written as code to paste into a test or a bug report, as Chrome's
/// "Copy as fetch", "Copy as fetch (Node.js)" and "Copy as PowerShell" and HTTP Toolkit's
/// snippets write it: `fetch`, `node`, `python` (requests), `httpie`, `powershell`, `wget`, and for
/// the apps DevProxy debugs `swift` (URLSession), `okhttp` (OkHttp from Java) and `kotlin` (OkHttp 4 from Kotlin).
///
/// Each goes where the request went, with its headers and body as `RepeatedRequest` gives them;
/// curl is `WebUI.curlCommand(for:)`. Strings are quoted for their language: JSON escapes for
/// JavaScript, Python literals with `\x` escapes (bytes for a binary body), PowerShell's backtick
/// escapes in double quotes, POSIX single quotes for the shell commands.
enum RequestCode: String, CaseIterable {
    case fetch, node, python, httpie, powershell, wget, swift, okhttp, kotlin

    /// Why the request cannot be written in this format, in one line; nil when it can.
    func refusal(of request: RepeatedRequest) -> String? {
        if request.webSocket {
            // fetch, requests, HTTPie, wget and the rest send no Upgrade or extended CONNECT.
            return "the request opened a WebSocket, whose handshake \(rawValue) cannot send: copy it as curl "
                + "(an HTTP/1.1 Upgrade)"
        }
        if request.bodyCut {
            return "the store kept \(request.body.count) of the request body's \(request.bodySize) bytes: "
                + "a copy would send another body"
        }
        if self == .httpie, let field = request.headers.first(where: { Self.httpieCannotSend($0.value) }) {
            return "HTTPie reads a backslash before : = @ ; as an escape, and \(field.name)'s value has one: "
                + "copy it as curl"
        }
        if self == .swift || self == .okhttp || self == .kotlin {
            return Self.mobileRefusal(of: request, library: self == .swift ? "URLSession" : "OkHttp")
        }
        if self == .wget, !request.body.isEmpty, WebUI.shellFeed(of: request.body) != nil {
            return "wget reads a body from an argument or a regular file, and this one has binary or control "
                + "bytes: copy it as curl"
        }
        return nil
    }

    /// The code that sends `request`, ending with a newline.
    func write(_ request: RepeatedRequest) -> String {
        switch self {
        case .fetch: return Self.javaScript(request, browser: true)
        case .node: return Self.javaScript(request, browser: false)
        case .python: return Self.python(request)
        case .httpie: return Self.httpie(request)
        case .powershell: return Self.powerShell(request)
        case .wget: return Self.wget(request)
        case .swift: return Self.swift(request)
        case .okhttp: return Self.okHttp(request)
        case .kotlin: return Self.kotlin(request)
        }
    }

    /// The formats' names as the API's error lists them.
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Header fields a client library negotiates itself: `Expect: 100-continue` belongs to the
    /// connection that sends the body (Node's fetch refuses it).
    static func isNegotiated(_ name: String) -> Bool { name.lowercased() == "expect" }

    // MARK: JavaScript

    /// Header names a browser's fetch refuses to set (the Fetch standard's forbidden request-headers).
    private static let forbiddenInBrowsers: Set<String> = [
        "accept-charset", "accept-encoding", "access-control-request-headers", "access-control-request-method",
        "access-control-request-private-network", "connection", "content-length", "cookie", "cookie2", "date",
        "dnt", "expect", "host", "keep-alive", "origin", "referer", "set-cookie", "te", "trailer",
        "transfer-encoding", "upgrade", "via",
    ]

    /// `fetch(url, {headers, body, method})` as Chrome writes it: for a page (`browser`), without
    /// the headers a browser sets itself, the referrer and credentials as options; for Node.js
    /// (18 and later), every header but `Host`, which Node's fetch takes from the URL.
    private static func javaScript(_ request: RepeatedRequest, browser: Bool) -> String {
        var lines: [String] = []
        if let host = request.headers.first(where: { $0.name.lowercased() == "host" })?.value {
            lines.append("// fetch sends the URL's host as Host; the request sent Host: \(commentSafe(host))")
        }
        let headers = request.headers.filter { field in
            let name = field.name.lowercased()
            guard name != "host", !isNegotiated(name) else { return false }
            let forbidden = forbiddenInBrowsers.contains(name) || name.hasPrefix("proxy-") || name.hasPrefix("sec-")
            return !browser || !forbidden
        }
        var options: [String] = []
        let fields = headers.map { "    \(javaScriptByteString($0.name)): \(javaScriptByteString($0.value))" }
        options.append(fields.isEmpty ? "  \"headers\": {}"
                       : "  \"headers\": {\n" + fields.joined(separator: ",\n") + "\n  }")
        if browser, let referrer = request.headers.first(where: { $0.name.lowercased() == "referer" })?.value {
            options.append("  \"referrer\": \(javaScriptString(referrer))")
        }
        let body: String
        if request.body.isEmpty {
            body = "null"
        } else if let text = request.textBody {
            body = javaScriptString(text)
        } else {
            let base64 = Data(request.body).base64EncodedString()
            body = browser ? "Uint8Array.from(atob(\"\(base64)\"), (c) => c.charCodeAt(0))"
                : "Buffer.from(\"\(base64)\", \"base64\")"
        }
        options.append("  \"body\": \(body)")
        options.append("  \"method\": \(javaScriptString(request.method))")
        if browser {
            options.append("  \"mode\": \"cors\"")
            let cookies = request.headers.contains { $0.name.lowercased() == "cookie" }
            options.append("  \"credentials\": \"\(cookies ? "include" : "omit")\"")
        }
        lines.append("fetch(\(javaScriptString(request.url)), {\n" + options.joined(separator: ",\n") + "\n});")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A JavaScript string literal (JSON's escapes, and U+2028/U+2029, which older engines end a line at).
    static func javaScriptString(_ text: String) -> String {
        backslashQuoted(text) { scalar in
            switch scalar {
            case "\u{2028}", "\u{2029}", "\u{0}"..."\u{1f}", "\u{7f}": String(format: "\\u%04x", scalar.value)
            default: nil
            }
        }
    }

    /// `text` in double quotes as C-family languages write a string: `\"`, `\\`, `\n`, `\r` and
    /// `\t`, and what `other` returns for any other character (nil: the character as it is).
    static func backslashQuoted(_ text: String, other: (Unicode.Scalar) -> String?) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if let escaped = other(scalar) { out += escaped } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }

    /// A header name or value as fetch sends it: a ByteString, one character per byte, so a
    /// UTF-8 value's bytes go as `\u00XX` each (a character above U+00FF is a TypeError in fetch).
    static func javaScriptByteString(_ text: String) -> String {
        javaScriptString(String(text.utf8.map { Character(Unicode.Scalar($0)) }))
    }

    /// `text` with control characters and line separators as `?`, to end a line comment.
    static func commentSafe(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7f || $0 == "\u{85}" || $0 == "\u{2028}" || $0 == "\u{2029}" ? "?" : $0
        }))
    }

    // MARK: Python

    /// `requests.request(method, url, headers=…, data=…)`, redirects not followed (as curl does
    /// not), printing the status and the body.
    private static func python(_ request: RepeatedRequest) -> String {
        var lines = ["import requests", "", "response = requests.request(",
                     "    \(pythonString(request.method)),", "    \(pythonString(request.url)),"]
        let headers = request.headers.filter { !isNegotiated($0.name) }
        if !headers.isEmpty {
            lines.append("    headers={")
            for field in headers {
                // http.client sends a str value as Latin-1; bytes go as they are (a UTF-8 value).
                let value = field.value.unicodeScalars.allSatisfy(\.isASCII)
                    ? pythonString(field.value) : pythonBytes(Array(field.value.utf8))
                lines.append("        \(pythonString(field.name)): \(value),")
            }
            lines.append("    },")
        }
        if !request.body.isEmpty {
            let data = request.textBody.map { pythonString($0) + ".encode()" } ?? pythonBytes(request.body)
            lines.append("    data=\(data),")
        }
        lines += ["    allow_redirects=False,", ")", "print(response.status_code)", "print(response.text)"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// A Python str literal: `\\`, `\"`, `\n`, `\r`, `\t`, `\xNN` for other control characters.
    static func pythonString(_ text: String) -> String {
        backslashQuoted(text) { scalar in
            switch scalar {
            case "\u{0}"..."\u{1f}", "\u{7f}", "\u{2028}", "\u{2029}", "\u{85}":
                String(format: scalar.value < 0x100 ? "\\x%02x" : "\\u%04x", scalar.value)
            default: nil
            }
        }
    }

    /// A Python bytes literal: printable ASCII as it is (`\\` and `\"` escaped), every other byte `\xNN`.
    static func pythonBytes(_ bytes: [UInt8]) -> String {
        var out = "b\""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out += "\\\""
            case UInt8(ascii: "\\"): out += "\\\\"
            case 0x20..<0x7f: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += String(format: "\\x%02x", byte)
            }
        }
        return out + "\""
    }
}
