import Foundation

/// Where a CA key's passphrase comes from. Never the command line: argv is visible to every
/// user of the machine through `ps`.
public enum PassphraseSource: Sendable, Equatable {
    case none
    case file(String)
    case environment(String)

    /// The environment variable consulted when no file is given.
    public static let environmentVariable = "DEVPROXY_CA_PASSPHRASE"

    /// `--passphrase-file` wins; else `variable` (`DEVPROXY_CA_PASSPHRASE`) when set, even empty
    /// (`read` refuses that); else none.
    public static func resolve(file: String?, variable: String = environmentVariable,
                               environment: [String: String] = ProcessInfo.processInfo.environment)
        -> PassphraseSource {
        if let file { return .file(file) }
        if environment[variable] != nil { return .environment(variable) }
        return .none
    }

    /// The passphrase: a file's first line (as OpenSSL's `-passin file:` reads it, and as `pass`
    /// keeps a password above its notes), the variable's value.
    ///
    /// - Throws: `.notFound` when the file cannot be read, `.invalidInput` when it or its first
    ///   line is empty or not text (bytes that are not UTF-8, or a NUL), or the variable is set
    ///   but empty (what a failed `export DEVPROXY_CA_PASSPHRASE="$(pass show …)"` leaves: it made
    ///   an unencrypted root without a word).
    public func read(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        switch self {
        case .none:
            return nil
        case .environment(let name):
            guard let value = environment[name], !value.isEmpty else {
                throw CAError(.invalidInput, "\(name) is set but empty: give the passphrase in it, or unset it")
            }
            return value
        case .file(let path):
            let bytes = try SecureFile.read(path, what: "the passphrase file")
            // Random bytes (`openssl rand 32 > root.pass`) were read as UTF-8 with every invalid byte
            // turned into U+FFFD, so other files with the same valid bytes opened the key, and
            // OpenSSL passes a passphrase as a C string: a NUL byte ended it there.
            guard let decoded = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
                throw CAError(.invalidInput, "the passphrase file \(path) holds binary bytes, not text; a passphrase is "
                              + "text: make one with `openssl rand -base64 32 > \(path)`")
            }
            // The first line, up to LF or CR LF (Swift reads CR LF as one Character). The whole text
            // was used: `pass show` output (password, then notes) made a key that neither OpenSSL nor
            // the password alone opened, and a note added later locked the lead out.
            let text = String(decoded.prefix { $0 != "\n" && $0 != "\r\n" && $0 != "\r" })
            guard !text.isEmpty else {
                throw CAError(.invalidInput, "the passphrase file \(path) is empty" + (decoded.isEmpty ? "" : " on its first line"))
            }
            return text
        }
    }
}
