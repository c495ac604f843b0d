import Foundation

/// A public-suffix-list matcher that answers TrustKit's `GetRegistryLength`.
///
/// TrustKit embeds Google's `domain_registry_provider` with a PSL snapshot frozen on 2018-07-10,
/// private section included. We read the list from a file instead (Debian's `publicsuffix`
/// package by default), so suffixes added after 2018 (`pages.dev`, `web.app`, …) are suffixes
/// here but not in TrustKit: for those names our accept/reject decision can differ.
public struct PublicSuffixList: Sendable {
    /// Where Debian's `publicsuffix` package installs the list.
    public static let defaultPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// The list at `defaultPath`, or the reason it could not be read.
    public static let system: Result<PublicSuffixList, PolicyError> = Result { try PublicSuffixList(path: defaultPath) }
        .mapError { $0 as? PolicyError ?? PolicyError(.unreadable, "\($0)") }

    private let rules: Set<String>
    private let wildcards: Set<String>
    private let exceptions: Set<String>

    /// Parses PSL text: one rule per line, `//` comments, `*.` wildcard and `!` exception rules.
    public init(text: String) {
        var rules = Set<String>(), wildcards = Set<String>(), exceptions = Set<String>()
        for rawLine in text.split(whereSeparator: \.isNewline) {
            // The PSL format ends a rule at the first whitespace.
            guard let token = rawLine.split(whereSeparator: \.isWhitespace).first, !token.hasPrefix("//") else {
                continue
            }
            let rule = token.lowercased()
            if rule.hasPrefix("!") {
                exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                wildcards.insert(String(rule.dropFirst(2)))
            } else {
                rules.insert(rule)
            }
        }
        self.rules = rules
        self.wildcards = wildcards
        self.exceptions = exceptions
    }

    /// Reads the list from `path`.
    ///
    /// - Throws: `PolicyError(.unreadable)` naming the file and the package that provides it.
    public init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PolicyError(.unreadable,
                              "cannot read the public suffix list at \(path); install it with `apt-get install publicsuffix`")
        }
        self.init(text: String(decoding: data, as: UTF8.self))
    }

    /// The length of the registry-controlled suffix of `host`, as `GetRegistryLength` returns it.
    ///
    /// 0 means "no registry": no rule matches (unknown TLD, `localhost`, IP literals), non-ASCII,
    /// longer than 255 bytes, or more than one trailing dot. One trailing dot is counted in the
    /// length (`good.com.` → 4); leading dots are ignored; matching is case-insensitive.
    public func registryLength(of host: String) -> Int {
        let bytes = Array(host.utf8)
        guard bytes.count <= 255, bytes.allSatisfy({ $0 < 0x80 }) else { return 0 }
        var name = Substring(host.lowercased())
        while name.hasPrefix(".") { name = name.dropFirst() }
        var trailing = 0
        if name.hasSuffix(".") {
            name = name.dropLast()
            trailing = 1
            if name.hasSuffix(".") { return 0 }
        }
        guard !name.isEmpty else { return 0 }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.contains(where: \.isEmpty) else { return 0 }
        // Longest suffix first, so the first rule that matches is the longest one.
        for start in 0..<labels.count {
            let suffix = labels[start...].joined(separator: ".")
            if exceptions.contains(suffix) {
                // `!www.ck`: the registry is the exception minus its first label.
                let parent = labels[(start + 1)...].joined(separator: ".")
                return parent.utf8.count + trailing
            }
            if rules.contains(suffix) {
                return suffix.utf8.count + trailing
            }
            if start + 1 < labels.count, wildcards.contains(labels[(start + 1)...].joined(separator: ".")) {
                return suffix.utf8.count + trailing
            }
        }
        return 0
    }

    /// True when `domain` is itself a public suffix (registry length equals its length).
    public func isPublicSuffix(_ domain: String) -> Bool {
        let length = registryLength(of: domain)
        return length > 0 && length == domain.utf8.count
    }
}
