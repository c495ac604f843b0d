import Foundation

/// `kotlin`: the request as an Android app's Kotlin sends it, with OkHttp 4's Kotlin API (5 keeps
/// it): `Request.Builder()`, `toMediaType()`, `toRequestBody(mediaType)` and
/// `client.newCall(request).execute().use { … }`. The rules are the Java program's
/// (`RequestCode.okHttp(_:)`): redirects not followed, `Host` and `Cookie` as recorded, a body
/// refused on GET and HEAD, an empty one for the methods OkHttp requires a body for.
extension RequestCode {
    /// A program (`kotlinc CopiedRequest.kt`, or a unit test's body) that sends the request and
    /// prints the status and the body. A recorded `Content-Type` OkHttp's `toMediaType()` reads
    /// (`kotlinMediaType(_:)`) becomes the body's media type, which OkHttp sends as it was given;
    /// any other stays a header field and the media type null, so OkHttp adds none of its own.
    static func kotlin(_ request: RepeatedRequest) -> String {
        let types = request.headers.filter { $0.name.lowercased() == "content-type" }
        let hasBody = !request.body.isEmpty || bodyRequired.contains(request.method.uppercased())
        let mediaType = hasBody && types.count == 1 && kotlinMediaType(types[0].value) ? types[0].value : nil
        var imports = ["okhttp3.Headers", "okhttp3.OkHttpClient", "okhttp3.Request"]
        if mediaType != nil { imports.append("okhttp3.MediaType.Companion.toMediaType") }
        if hasBody { imports.append("okhttp3.RequestBody.Companion.toRequestBody") }
        if request.textBody == nil, !request.body.isEmpty { imports.append("java.util.Base64") }
        var lines = imports.sorted().map { "import \($0)" }
        lines += ["", "fun main() {",
                  "    val client = OkHttpClient.Builder().followRedirects(false).followSslRedirects(false).build()",
                  "    val headers = Headers.Builder()"]
        for field in request.headers where !isNegotiated(field.name)
            && !(mediaType != nil && field.name.lowercased() == "content-type") {
            let safe = field.value.unicodeScalars.allSatisfy { $0 == "\t" || (0x20...0x7e).contains($0.value) }
            lines.append("        .\(safe ? "add" : "addUnsafeNonAscii")(\(kotlinString(field.name)), "
                         + "\(kotlinString(field.value)))")
        }
        lines.append("        .build()")
        if let mediaType { lines.append("    val mediaType = \(kotlinString(mediaType)).toMediaType()") }
        let bytes: String
        if request.body.isEmpty {
            bytes = "ByteArray(0)"
        } else if let text = request.textBody {
            bytes = "\(kotlinText(text)).toByteArray()"
        } else {
            bytes = "Base64.getDecoder().decode(\(kotlinText(Data(request.body).base64EncodedString())))"
        }
        lines.append("    val body = " + (hasBody ? "\(bytes).toRequestBody(\(mediaType == nil ? "null" : "mediaType"))"
                                           : "null"))
        lines += [
            "    val request = Request.Builder()",
            "        .url(\(kotlinString(request.url)))",
            "        .headers(headers)",
            "        .method(\(kotlinString(request.method)), body)",
            "        .build()",
            "    client.newCall(request).execute().use { response ->",
            "        println(response.code)",
            "        println(response.body?.string())",
            "    }",
            "}",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// True when OkHttp's `toMediaType()` reads `value` and gives it back as it is: `type/subtype`
    /// then `; name=value` parameters (a token, or a quoted string without `"` or `\`), at most one
    /// space after each `;`, and one `charset` at most (OkHttp 3.13's parser, the one this machine
    /// has, throws "Multiple charsets defined" for two); a stricter grammar than OkHttp's (RFC
    /// 9110's tokens), so nothing it lets through throws.
    static func kotlinMediaType(_ value: String) -> Bool {
        let token = "[A-Za-z0-9!#$%&'*+.^_`|~-]+"
        let pattern = "^\(token)/\(token)(; ?\(token)=(\(token)|\"[^\"\\\\]*\"))*$"
        let charsets = value.lowercased().components(separatedBy: "charset=").count - 1
        return charsets <= 1 && value.range(of: pattern, options: .regularExpression) != nil
    }

    /// `text` as Kotlin source: one literal, or for a long text `listOf(…).joinToString("")` of
    /// literals within `javaLiteralLimit` (a class file's limit for one constant holds for Kotlin too).
    static func kotlinText(_ text: String) -> String {
        let pieces = literalPieces(text).map(kotlinString)
        guard pieces.count > 1 else { return pieces.first ?? "\"\"" }
        return "listOf(\n        " + pieces.joined(separator: ",\n        ") + "\n    ).joinToString(\"\")"
    }

    /// A Kotlin string literal in ASCII: `\\`, `\"`, `\n`, `\r`, `\t`, `\$` (a `$` starts a
    /// template in Kotlin), and `\uXXXX` for other control characters and each UTF-16 unit past ASCII
    /// (Kotlin reads `\u` only inside a literal, so a line feed written so is one too).
    static func kotlinString(_ text: String) -> String {
        backslashQuoted(text) { scalar in
            switch scalar {
            case "$": "\\$"
            case "\u{0}"..."\u{1f}", "\u{7f}": String(format: "\\u%04x", scalar.value)
            case _ where scalar.isASCII: nil
            default: String(scalar).utf16.map { String(format: "\\u%04x", $0) }.joined()
            }
        }
    }
}
