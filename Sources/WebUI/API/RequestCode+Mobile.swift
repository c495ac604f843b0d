import Foundation

/// The formats for the apps DevProxy debugs: Swift's `URLSession` (iOS, macOS, and Linux through
/// FoundationNetworking) and OkHttp from Java (Android; OkHttp 3.12 and later, 4 and 5 too) or from
/// Kotlin (`RequestCode+Kotlin.swift`), so a request seen from a phone can go into a unit test or a
/// bug report in the app's own language.
extension RequestCode {
    /// Methods that may not carry a body in the client library: `URLSession` fails a GET with a
    /// body (Apple's platforms answer `NSURLErrorDataLengthExceedsMaximum`), OkHttp throws for
    /// GET and HEAD (`method GET must not have a request body`).
    static let bodylessMethods: Set<String> = ["GET", "HEAD"]

    /// Why `request` cannot be written for URLSession or OkHttp, or nil.
    static func mobileRefusal(of request: RepeatedRequest, library: String) -> String? {
        guard !request.body.isEmpty, bodylessMethods.contains(request.method.uppercased()) else { return nil }
        return "\(library) refuses a body on \(request.method.uppercased()), and this request has "
            + "\(request.body.count) bytes: copy it as curl"
    }

    // MARK: Swift

    /// Header fields `URLSession` sets itself and ignores when a request sets them (Apple's
    /// `URLRequest` documentation, "Reserved HTTP Headers"; `Authorization`, which that list
    /// names too, is set by apps every day and sent, so it stays).
    private static let reservedForURLSession: Set<String> = [
        "content-length", "connection", "host", "proxy-authenticate", "proxy-authorization", "www-authenticate",
    ]

    /// A script `swift copied.swift` runs (or the body of a test): a `URLRequest` with the method,
    /// the header fields (`addValue`, so a repeated one is sent as one comma-joined field, as
    /// URLSession sends it), cookies as recorded (`httpShouldHandleCookies` off) and the body,
    /// sent with `URLSession.shared`, printing the status and the body; an error goes to
    /// standard error and exits 1. URLSession follows redirects, and sends `Host` from the URL:
    /// a recorded `Host` that named another is said in a comment.
    static func swift(_ request: RepeatedRequest) -> String {
        var lines = ["import Foundation", "#if canImport(FoundationNetworking)", "import FoundationNetworking",
                     "#endif", ""]
        if let host = request.headers.first(where: { $0.name.lowercased() == "host" })?.value {
            lines.append("// URLSession sends the URL's host as Host; the request sent Host: \(commentSafe(host))")
        }
        lines.append("var request = URLRequest(url: URL(string: \(swiftString(request.url)))!)")
        lines.append("request.httpMethod = \(swiftString(request.method))")
        lines.append("request.httpShouldHandleCookies = false")
        for field in request.headers where !isNegotiated(field.name)
            && !reservedForURLSession.contains(field.name.lowercased()) {
            lines.append("request.addValue(\(swiftString(field.value)), forHTTPHeaderField: \(swiftString(field.name)))")
        }
        if !request.body.isEmpty {
            if let text = request.textBody {
                lines.append("request.httpBody = Data(\(swiftString(text)).utf8)")
            } else {
                let base64 = Data(request.body).base64EncodedString()
                lines.append("request.httpBody = Data(base64Encoded: \"\(base64)\")!")
            }
        }
        lines += [
            "",
            "let done = DispatchSemaphore(value: 0)",
            "URLSession.shared.dataTask(with: request) { data, response, error in",
            "    if let error {",
            "        FileHandle.standardError.write(Data(\"\\(error.localizedDescription)\\n\".utf8))",
            "        exit(1)",
            "    }",
            "    if let response = response as? HTTPURLResponse {",
            "        print(response.statusCode)",
            "        print(String(decoding: data ?? Data(), as: UTF8.self))",
            "    }",
            "    done.signal()",
            "}.resume()",
            "done.wait()",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// A Swift string literal: `\\`, `\"`, `\n`, `\r`, `\t`, `\0` and `\u{…}` for other control
    /// characters and line separators; everything else as it is (the file is UTF-8).
    static func swiftString(_ text: String) -> String {
        backslashQuoted(text) { scalar in
            switch scalar {
            case "\u{0}": "\\0"
            case "\u{1}"..."\u{1f}", "\u{7f}", "\u{85}", "\u{2028}", "\u{2029}":
                "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: nil
            }
        }
    }

    // MARK: OkHttp (Java)

    /// Methods OkHttp requires a body for (`HttpMethod.requiresRequestBody`): an empty one is sent.
    static let bodyRequired: Set<String> = ["POST", "PUT", "PATCH", "PROPPATCH", "REPORT"]

    /// A Java program (`java -cp okhttp.jar:okio.jar CopiedRequest.java`) that sends the request
    /// with OkHttp, redirects not followed (as curl does not), printing the status and the body.
    /// Header fields go through `Headers.Builder`: `add` for printable ASCII, `addUnsafeNonAscii`
    /// for a value OkHttp's `add` refuses (UTF-8, as recorded); `Host`, `Cookie` and
    /// `Content-Type` set here are the ones OkHttp sends. The body's media type is left null, so
    /// OkHttp adds no `Content-Type` of its own.
    static func okHttp(_ request: RepeatedRequest) -> String {
        var lines = ["import okhttp3.*;", "", "public class CopiedRequest {",
                     "    public static void main(String[] args) throws Exception {",
                     "        OkHttpClient client = new OkHttpClient.Builder().followRedirects(false)"
                     + ".followSslRedirects(false).build();",
                     "        Headers headers = new Headers.Builder()"]
        for field in request.headers where !isNegotiated(field.name) {
            let safe = field.value.unicodeScalars.allSatisfy { $0 == "\t" || (0x20...0x7e).contains($0.value) }
            lines.append("            .\(safe ? "add" : "addUnsafeNonAscii")(\(javaString(field.name)), "
                         + "\(javaString(field.value)))")
        }
        lines.append("            .build();")
        let method = request.method
        if request.body.isEmpty {
            let body = bodyRequired.contains(method.uppercased()) ? "RequestBody.create(null, new byte[0])" : "null"
            lines.append("        RequestBody body = \(body);")
        } else if let text = request.textBody {
            lines.append("        RequestBody body = RequestBody.create(null, \(javaText(text))"
                         + ".getBytes(java.nio.charset.StandardCharsets.UTF_8));")
        } else {
            let base64 = Data(request.body).base64EncodedString()
            lines.append("        RequestBody body = RequestBody.create(null, java.util.Base64.getDecoder().decode("
                         + "\(javaText(base64))));")
        }
        lines += [
            "        Request request = new Request.Builder()",
            "            .url(\(javaString(request.url)))",
            "            .headers(headers)",
            "            .method(\(javaString(method)), body)",
            "            .build();",
            "        try (Response response = client.newCall(request).execute()) {",
            "            System.out.println(response.code());",
            "            System.out.println(response.body().string());",
            "        }",
            "    }",
            "}",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The longest piece of text one Java string literal holds here: a class file keeps a
    /// constant in at most 65,535 bytes of modified UTF-8 (3 bytes a character at most).
    static let javaLiteralLimit = 16_000

    /// `text` as Java source: one literal, or for a long text `String.join("", …)` of literals
    /// within `javaLiteralLimit`, joined when the program runs.
    static func javaText(_ text: String) -> String {
        let pieces = literalPieces(text).map(javaString)
        guard pieces.count > 1 else { return pieces.first ?? "\"\"" }
        return "String.join(\"\",\n                " + pieces.joined(separator: ",\n                ") + ")"
    }

    /// `text` cut into pieces of at most `javaLiteralLimit` characters (one piece when it is shorter).
    static func literalPieces(_ text: String) -> [String] {
        let scalars = Array(text.unicodeScalars)
        var pieces: [String] = []
        var start = 0
        repeat {
            let end = min(start + javaLiteralLimit, scalars.count)
            pieces.append(String(String.UnicodeScalarView(scalars[start..<end])))
            start = end
        } while start < scalars.count
        return pieces
    }

    /// A Java string literal in ASCII: `\\`, `\"`, `\n`, `\r`, `\t`, three-digit octal escapes for other
    /// control characters, and `\uXXXX` (each UTF-16 unit) for everything past ASCII. Control
    /// characters are never written as `\u000a`: javac reads `\u` escapes before it reads
    /// literals, and a line feed written so would end the line.
    static func javaString(_ text: String) -> String {
        backslashQuoted(text) { scalar in
            switch scalar {
            // Three digits always: `\1` before a `2` would read as `\12`, a line feed.
            case "\u{0}"..."\u{1f}", "\u{7f}": String(format: "\\%03o", scalar.value)
            case _ where scalar.isASCII: nil
            default: String(scalar).utf16.map { String(format: "\\u%04x", $0) }.joined()
            }
        }
    }
}
