import Foundation

/// The command-line formats: HTTPie's `http`, `wget` (POSIX shell quoting, as the curl export
/// quotes) and PowerShell's `Invoke-WebRequest`.
extension RequestCode {
    // MARK: HTTPie

    /// `http METHOD URL Name:value …` (HTTPie 3): a text body as `--raw`, a body with control or
    /// binary bytes on standard input (`printf … | http …`, as the curl export feeds curl).
    /// A value starting with `=` or `@` has it escaped (`Name:\=…`); an empty value is `Name;`, as
    /// HTTPie writes one; `Content-Type:` unsets the JSON type HTTPie gives a body when the request
    /// had none. HTTPie sends header values as UTF-8, as they were recorded.
    static func httpie(_ request: RepeatedRequest) -> String {
        let feed = request.body.isEmpty ? nil : WebUI.shellFeed(of: request.body)
        var parts = ["http"]
        if feed == nil { parts.append("--ignore-stdin") }
        if feed == nil, !request.body.isEmpty, let text = request.textBody {
            parts.append(WebUI.shellQuoted("--raw=" + text))
        }
        parts += [WebUI.shellQuoted(request.method), WebUI.shellQuoted(request.url)]
        for field in request.headers where !isNegotiated(field.name) {
            let item = field.value.isEmpty ? field.name + ";" : field.name + ":" + httpieEscaped(field.value)
            parts.append(WebUI.shellQuoted(item))
        }
        if !request.body.isEmpty, !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            parts.append(WebUI.shellQuoted("Content-Type:"))
        }
        return (feed ?? "") + parts.joined(separator: " ") + "\n"
    }

    /// `value` as an item's value: HTTPie reads a value starting with `=` or `@` as another
    /// separator (`:=` JSON, `:@` a file), so that character is escaped; the rest goes as it is,
    /// as HTTPie splits an item at its first separator.
    private static func httpieEscaped(_ value: String) -> String {
        value.first.map { "=@".contains($0) } == true ? "\\" + value : value
    }

    /// Whether HTTPie would read part of `value` as an escape: `\` before one of its separator
    /// characters is that character alone, and HTTPie has no way to write the backslash.
    static func httpieCannotSend(_ value: String) -> Bool {
        zip(value, value.dropFirst()).contains { $0 == "\\" && ":=@;".contains($1) }
    }

    // MARK: wget

    /// `wget -O - --content-on-error --max-redirect=0 [--method=M] [--body-data=TEXT] --header=… URL`:
    /// the answer's body on standard output, redirects not followed (as curl does not). Only a
    /// body that goes inline is written (`refusal(of:)` says so for the others).
    static func wget(_ request: RepeatedRequest) -> String {
        var parts = ["wget", "-O", "-", "--content-on-error", "--max-redirect=0"]
        if request.method != "GET" || !request.body.isEmpty {
            parts.append(WebUI.shellQuoted("--method=" + request.method))
        }
        for field in request.headers where !isNegotiated(field.name) {
            parts.append(WebUI.shellQuoted("--header=\(field.name): \(field.value)"))
        }
        if let text = request.textBody, !text.isEmpty { parts.append(WebUI.shellQuoted("--body-data=" + text)) }
        parts.append(WebUI.shellQuoted(request.url))
        return parts.joined(separator: " ") + "\n"
    }

    // MARK: PowerShell

    /// The methods `Invoke-WebRequest -Method` takes; others go as `-CustomMethod` (PowerShell 6 and later).
    private static let powerShellMethods: Set<String> = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS",
                                                         "PATCH", "TRACE", "MERGE"]

    /// `Invoke-WebRequest` as Chrome's "Copy as PowerShell" writes it: the User-Agent on a web
    /// session, `Content-Type` as `-ContentType`, the other fields in `-Headers`; a body with
    /// non-ASCII or binary bytes as the bytes themselves (UTF-8 of the text, or base64 decoded),
    /// so that no PowerShell version re-encodes it.
    static func powerShell(_ request: RepeatedRequest) -> String {
        var lines = ["$session = New-Object Microsoft.PowerShell.Commands.WebRequestSession"]
        let userAgent = request.headers.first { $0.name.lowercased() == "user-agent" }?.value
        if let userAgent { lines.append("$session.UserAgent = \(powerShellString(userAgent))") }
        var call = ["Invoke-WebRequest -UseBasicParsing -Uri \(powerShellString(request.url))"]
        let method = request.method.uppercased() == request.method ? request.method : ""
        if powerShellMethods.contains(method) {
            if method != "GET" { call.append("-Method \(powerShellString(method))") }
        } else {
            call.append("-CustomMethod \(powerShellString(request.method))")
        }
        call.append("-WebSession $session")
        let headers = request.headers.filter {
            !["user-agent", "content-type"].contains($0.name.lowercased()) && !isNegotiated($0.name)
        }
        if !headers.isEmpty {
            let entries = headers.map { "  \(powerShellString($0.name))=\(powerShellString($0.value))" }
            call.append("-Headers @{\n" + entries.joined(separator: "\n") + "\n}")
        }
        if let type = request.headers.first(where: { $0.name.lowercased() == "content-type" })?.value {
            call.append("-ContentType \(powerShellString(type))")
        }
        if !request.body.isEmpty {
            if let text = request.textBody, text.unicodeScalars.allSatisfy(\.isASCII) {
                call.append("-Body \(powerShellString(text))")
            } else if let text = request.textBody {
                call.append("-Body ([System.Text.Encoding]::UTF8.GetBytes(\(powerShellString(text))))")
            } else {
                let base64 = Data(request.body).base64EncodedString()
                call.append("-Body ([System.Convert]::FromBase64String(\"\(base64)\"))")
            }
        }
        lines.append(call.joined(separator: " `\n"))
        return lines.joined(separator: "\n") + "\n"
    }

    /// A PowerShell double-quoted string: `` ` ``, `$` and every double quote PowerShell knows
    /// (`"`, `“`, `”`, `„`) escaped with a backtick; control characters as `` `n ``, `` `r ``,
    /// `` `t ``, `` `0 `` or `$([char]N)`.
    static func powerShellString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "`", "$", "\"", "\u{201C}", "\u{201D}", "\u{201E}":
                out += "`"
                out.unicodeScalars.append(scalar)
            case "\n": out += "`n"
            case "\r": out += "`r"
            case "\t": out += "`t"
            case "\u{0}": out += "`0"
            case "\u{1}"..."\u{1f}", "\u{7f}": out += "$([char]\(scalar.value))"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
