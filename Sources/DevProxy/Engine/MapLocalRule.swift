import Foundation

/// `--map-local |FLOW-FILTER|URL-REGEX|LOCAL-PATH`: a request whose URL the regex matches is
/// answered from a local file, never reaching its origin (mitmproxy's map_local). A file path
/// serves that file. A directory serves what the rest of the URL names below it: the part after
/// the match (or the regex's first group, when it has one), without the query, percent-decoded;
/// `index.html` for a directory or nothing; a name with characters other than letters, digits
/// and `-_.=(),/` is also looked for with `_` in their place. Nothing outside the directory is
/// served (no `..`, no symbolic link leading out). The file is read at each request, so edits show
/// at once; its `Content-Type` comes from its extension.
public struct MapLocalRule: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe once made
    /// The option as given, for the flow's `mapped.by`.
    public let option: String
    let filter: MapRequestFilter?
    private let regex: NSRegularExpression
    /// The file or directory, absolute.
    public let path: String
    private let isDirectory: Bool
    /// The directory with its symbolic links resolved: what a served file must be inside of.
    private let resolvedDirectory: String
    /// A mock's answer, typed in the web UI's Rules view (`RuleBoard`): sent in place of a file.
    let inline: LocalResponse?

    /// The largest file served (a bigger one is answered 500 saying so): it is read whole.
    static let fileLimit = 256 << 20

    /// Parses `|FLOW-FILTER|URL-REGEX|LOCAL-PATH` (the filter part may be left out); a relative
    /// path is read against `directory`, `~/` as the home directory.
    /// - Throws: `ConfigurationError` for a bad rule, or a path that is not a readable file or directory.
    public init(parsing option: String, directory: String) throws {
        let name = "--map-local \(option)"
        let parts = try MapRules.parts(of: option, name: "--map-local", target: "LOCAL-PATH")
        self.option = option
        filter = try parts.filter.map { try MapRequestFilter(parsing: $0, option: name) }
        regex = try MapRules.regex(parts.regex, option: name)
        var path = parts.target
        if path == "~" || path.hasPrefix("~/") { path = NSHomeDirectory() + path.dropFirst() }
        if !path.hasPrefix("/") { path = (directory as NSString).appendingPathComponent(path) }
        path = (path as NSString).standardizingPath
        var directoryFlag: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &directoryFlag) else {
            throw ConfigurationError("\(name): \(path) does not exist; give a file or a directory")
        }
        isDirectory = directoryFlag.boolValue
        guard access(path, isDirectory ? R_OK | X_OK : R_OK) == 0 else {
            throw ConfigurationError("\(name): \(path) cannot be read (\(String(cString: strerror(errno))))")
        }
        self.path = path
        resolvedDirectory = isDirectory ? Self.resolved(path) ?? path : ""
        inline = nil
    }

    /// A mock: `|FLOW-FILTER|URL-REGEX` or `|URL-REGEX` answered with `response`, no file read.
    /// - Parameter path: what the flow's `mapped.to` says answered (`mock 200 application/json`).
    /// - Throws: `ConfigurationError` for a bad rule.
    init(mock option: String, response: LocalResponse, path: String) throws {
        let name = "mock \(option)"
        let usage = "give a mock |FLOW-FILTER|URL-REGEX or |URL-REGEX (the first character is the separator)"
        guard let separator = option.first else { throw ConfigurationError("mock is empty; \(usage)") }
        let parts = option.dropFirst().split(separator: separator, omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(parts.count), let pattern = parts.last, !pattern.isEmpty else {
            throw ConfigurationError("\(name) is not a rule: \(usage)")
        }
        self.option = option
        filter = parts.count == 2 && !parts[0].isEmpty ? try MapRequestFilter(parsing: parts[0], option: name) : nil
        regex = try MapRules.regex(pattern, option: name)
        self.path = path
        isDirectory = false
        resolvedDirectory = ""
        inline = response
    }

    /// What answers `url`: the file and the route serving it, or (`missing`) the files looked for
    /// when none exists; nil when the regex does not match.
    func answer(for url: String) -> (file: String, missing: [String]?, route: LocalRoute?)? {
        let text = url as NSString
        guard let match = regex.firstMatch(in: url, range: NSRange(location: 0, length: text.length)) else {
            return nil
        }
        if let inline { return (path, nil, MapOutcome.route(inline, name: "mock")) }
        let files: [String]
        if isDirectory {
            // mitmproxy takes `re.split(regex, url, 1)[1]`: the first group when the regex has one.
            let rest = regex.numberOfCaptureGroups > 0
                ? (match.range(at: 1).location == NSNotFound ? "" : text.substring(with: match.range(at: 1)))
                : text.substring(from: match.range.location + match.range.length)
            guard let names = candidates(below: rest) else {
                let reason = "--map-local refused \(url): its path leads outside \(path)"
                return (path, nil, MapOutcome.route(.refusal(status: 403, kind: .badRequest, reason)))
            }
            files = names
        } else {
            files = [path]
        }
        for file in files where isServable(file) {
            return (file, nil, MapOutcome.route(serve(file)))
        }
        return (files[0], files, nil)
    }

    /// The files `rest` (the URL after the match) names below the directory; nil when one would
    /// lie outside it.
    private func candidates(below rest: String) -> [String]? {
        let trimmed = rest.prefix { $0 != "?" && $0 != "#" }.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard !trimmed.isEmpty else { return [path + "/index.html"] }
        let decoded = trimmed.removingPercentEncoding ?? trimmed
        var names = [decoded, decoded + "/index.html"]
        let escaped = String(decoded.map { character -> Character in
            let kept = character.isLetter || character.isNumber || "-_.=(),/".contains(character)
            return character.isASCII && kept ? character : "_"
        })
        if escaped != decoded { names += [escaped, escaped + "/index.html"] }
        var files: [String] = []
        for name in names {
            let components = name.split(separator: "/", omittingEmptySubsequences: true)
            guard !components.contains(where: { $0 == ".." }), !name.contains("\0") else { return nil }
            files.append(([path] + components.filter { $0 != "." }.map(String.init)).joined(separator: "/"))
        }
        return files
    }

    /// Whether `file` is a regular file this rule may serve: inside the directory once symbolic
    /// links are resolved.
    private func isServable(_ file: String) -> Bool {
        var status = stat()
        guard stat(file, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return false }
        guard isDirectory else { return true }
        guard let real = Self.resolved(file) else { return false }
        return real.hasPrefix(resolvedDirectory.hasSuffix("/") ? resolvedDirectory : resolvedDirectory + "/")
    }

    /// 200 with the file's bytes and its content type; 500 saying why when it cannot be read.
    private func serve(_ file: String) -> LocalResponse {
        guard let handle = FileHandle(forReadingAtPath: file) else {
            let reason = String(cString: strerror(errno))
            return .refusal(status: 500, kind: .ruleFailed, "--map-local could not read \(file): \(reason)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: Self.fileLimit + 1)) ?? Data()
        guard data.count <= Self.fileLimit else {
            return .refusal(status: 500, kind: .ruleFailed,
                            "--map-local serves files of at most \(Self.fileLimit >> 20) MiB, and \(file) is larger")
        }
        var headers: [(name: String, value: String)] = []
        if let type = Self.contentType(of: file) { headers.append(("Content-Type", type)) }
        return LocalResponse(status: 200, headers: headers, body: [UInt8](data))
    }

    /// `path` with symbolic links resolved, or nil.
    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// The media type of a file name's extension; nil for one not known (mitmproxy sends none then).
    static func contentType(of file: String) -> String? {
        let name = (file as NSString).lastPathComponent.lowercased()
        guard let dot = name.lastIndex(of: ".") else { return nil }
        return types[String(name[name.index(after: dot)...])]
    }

    private static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "css": "text/css; charset=utf-8",
        "js": "text/javascript; charset=utf-8", "mjs": "text/javascript; charset=utf-8",
        "json": "application/json", "map": "application/json", "xml": "application/xml",
        "txt": "text/plain; charset=utf-8", "csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "avif": "image/avif", "ico": "image/vnd.microsoft.icon", "bmp": "image/bmp",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        "pdf": "application/pdf", "wasm": "application/wasm", "zip": "application/zip", "gz": "application/gzip",
        "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg",
        "m3u8": "application/vnd.apple.mpegurl", "ts": "video/mp2t", "yaml": "application/yaml",
        "yml": "application/yaml", "pem": "application/x-pem-file", "bin": "application/octet-stream",
    ]
}
