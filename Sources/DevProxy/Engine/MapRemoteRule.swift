import Foundation

/// `--map-remote |FLOW-FILTER|URL-REGEX|REPLACEMENT`: a request whose URL the regex matches goes
/// to the URL the replacement makes of it, every match replaced as Python's `re.sub` replaces
/// them (mitmproxy's map_remote): `\1`…`\99` and `\g<1>` or `\g<name>` stand for a group, `\\`
/// for a backslash. The request goes to the new URL's scheme, host, port and path, its `Host`
/// (`:authority`) the new URL's.
public struct MapRemoteRule: @unchecked Sendable {  // NSRegularExpression is immutable and thread-safe once made
    /// The option as given, for the flow's `mapped.by`.
    public let option: String
    let filter: MapRequestFilter?
    private let regex: NSRegularExpression
    private let replacement: [Piece]

    /// A part of the replacement: text as it is, or a group of the match (`--modify-body`'s too).
    enum Piece {
        case text(String)
        case group(Int)
        case named(String)
    }

    /// Parses `|FLOW-FILTER|URL-REGEX|REPLACEMENT` (the filter part may be left out).
    /// - Throws: `ConfigurationError` naming the option and what is wrong.
    public init(parsing option: String) throws {
        let name = "--map-remote \(option)"
        let parts = try MapRules.parts(of: option, name: "--map-remote", target: "REPLACEMENT")
        self.option = option
        filter = try parts.filter.map { try MapRequestFilter(parsing: $0, option: name) }
        regex = try MapRules.regex(parts.regex, option: name)
        replacement = try Self.pieces(parts.target, groups: regex.numberOfCaptureGroups, pattern: parts.regex,
                                      option: name)
    }

    /// `url` with every match of the regex replaced; nil when the regex does not match.
    func rewrite(_ url: String) -> String? {
        let text = url as NSString
        let matches = regex.matches(in: url, range: NSRange(location: 0, length: text.length))
        guard !matches.isEmpty else { return nil }
        var result = ""
        var last = 0
        for match in matches {
            result += text.substring(with: NSRange(location: last, length: match.range.location - last))
            for piece in replacement {
                switch piece {
                case .text(let literal): result += literal
                case .group(let index): result += Self.substring(text, match.range(at: index))
                case .named(let name): result += Self.substring(text, match.range(withName: name))
                }
            }
            last = match.range.location + match.range.length
        }
        return result + text.substring(from: last)
    }

    /// A group's text; empty for a group that took no part in the match (as Python has it).
    private static func substring(_ text: NSString, _ range: NSRange) -> String {
        range.location == NSNotFound ? "" : text.substring(with: range)
    }

    /// Where a rewritten URL goes: `http://` or `https://` (any case), a host, an optional port
    /// (1–65535), the path and query (`/` when there is none; a fragment dropped). Nil for
    /// anything else, user information (`user@host`) included.
    static func destination(of url: String) -> Destination? {
        guard let separator = url.range(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        let rest = url[separator.upperBound...].prefix { $0 != "#" }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var pathAndQuery = String(rest[authorityEnd...])
        if pathAndQuery.isEmpty || pathAndQuery.hasPrefix("?") { pathAndQuery = "/" + pathAndQuery }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host = Substring(authority)
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        let tls = scheme == "https"
        var port = tls ? 443 : 80
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { return nil }
            port = number
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "%" || $0 == "\\" }) else { return nil }
        return Destination(tls: tls, host: host.lowercased(), port: port, pathAndQuery: pathAndQuery)
    }

    /// The replacement read as Python's `re.sub` reads it.
    static func pieces(_ template: String, groups: Int, pattern: String, option: String) throws -> [Piece] {
        var pieces: [Piece] = []
        var text = ""
        var characters = Array(template)[...]
        func flush() {
            if !text.isEmpty { pieces.append(.text(text)) }
            text = ""
        }
        func group(_ index: Int) throws -> Piece {
            guard index <= groups else {
                throw ConfigurationError("\(option): the replacement names group \(index), and the regex has "
                                         + (groups == 0 ? "no group" : groups == 1 ? "one" : "\(groups)"))
            }
            return .group(index)
        }
        while let character = characters.popFirst() {
            guard character == "\\" else {
                text.append(character)
                continue
            }
            guard let next = characters.popFirst() else {
                throw ConfigurationError("\(option): the replacement ends with a lone \\ (write \\\\ for a backslash)")
            }
            switch next {
            case "\\":
                text.append("\\")
            case "0"..."9":
                var digits = String(next)
                if let second = characters.first, second.isASCII, second.isNumber {
                    digits.append(second)
                    characters.removeFirst()
                }
                flush()
                pieces.append(try group(Int(digits) ?? 0))
            case "g":
                guard characters.first == "<", let close = characters.firstIndex(of: ">") else {
                    throw ConfigurationError("\(option): \\g in the replacement needs a group: \\g<1> or \\g<name>")
                }
                let name = String(characters[characters.index(after: characters.startIndex)..<close])
                characters = characters[characters.index(after: close)...]
                flush()
                if let index = Int(name) {
                    pieces.append(try group(index))
                } else {
                    guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
                          pattern.contains("(?<\(name)>") || pattern.contains("(?P<\(name)>") else {
                        throw ConfigurationError("\(option): \\g<\(name)> in the replacement names no group")
                    }
                    pieces.append(.named(name))
                }
            default:
                throw ConfigurationError("\(option): \\\(next) in the replacement is not a group reference (\\1, "
                                         + "\\g<1>, \\g<name>) nor \\\\")
            }
        }
        flush()
        return pieces
    }
}
