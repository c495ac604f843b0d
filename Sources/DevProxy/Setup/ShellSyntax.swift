/// How one shell sets, removes and quotes an environment variable, for the lines `devproxy env`
/// prints to be evaluated (`eval "$(devproxy env)"`, `devproxy env --shell fish | source`).
///
/// Every value is quoted, whatever it holds: a CA directory under `~/My Files/it's here` must
/// come out of the shell's parser as it went in.
public enum ShellSyntax: String, Sendable, CaseIterable {
    /// POSIX sh, bash, zsh, dash, ksh: `export NAME='value'`.
    case sh
    /// fish: `set -gx NAME 'value'`.
    case fish
    /// PowerShell (pwsh on Linux and macOS, Windows PowerShell): `$env:NAME = 'value'`.
    case powershell

    /// The line that sets `name` to `value` for this shell and the programs it starts.
    public func assignment(_ name: String, _ value: String) -> String {
        switch self {
        case .sh: "export \(name)=\(quoted(value))"
        case .fish: "set -gx \(name) \(quoted(value))"
        case .powershell: "$env:\(name) = \(quoted(value))"
        }
    }

    /// The line that removes `name` from the environment (no error when it is not set).
    public func removal(_ name: String) -> String {
        switch self {
        case .sh: "unset \(name)"
        case .fish: "set -e \(name)"
        case .powershell: "Remove-Item Env:\(name) -ErrorAction SilentlyContinue"
        }
    }

    /// `text` as a comment line, which every one of these shells ignores.
    public func comment(_ text: String) -> String {
        "# " + text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ")
    }

    /// `value` as one word this shell reads back byte for byte.
    ///
    /// - sh: single quotes, in which nothing is special; a `'` ends them, is written `\'` and
    ///   they open again (`'it'\''s'`).
    /// - fish: single quotes, in which only `\\` and `\'` are escapes (fish's "Quotes").
    /// - PowerShell: single quotes (a verbatim string), in which a quote is doubled. PowerShell
    ///   takes the typographic quotes U+2018–U+201B for `'` as well, so those are doubled too.
    public func quoted(_ value: String) -> String {
        switch self {
        case .sh:
            return "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
        case .fish:
            return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        case .powershell:
            var result = "'"
            for character in value {
                if ["'", "\u{2018}", "\u{2019}", "\u{201A}", "\u{201B}"].contains(character) { result.append(character) }
                result.append(character)
            }
            return result + "'"
        }
    }

    /// `value` as it is when this shell reads it as one word unchanged (letters, digits and
    /// `/._-+:@%,` only: a path, an address), else `quoted(value)`: for a command shown to be
    /// copied, which reads better without quotes it does not need.
    public func word(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "/._-+:@%,".unicodeScalars.contains($0)
        }
        return plain ? value : quoted(value)
    }
}
