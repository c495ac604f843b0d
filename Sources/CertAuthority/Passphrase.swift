import Foundation

/// Where a CA key's passphrase comes from. Never the command line: argv is visible to every
/// user of the machine through `ps`.
public enum PassphraseSource: Sendable, Equatable {
    case none
    case file(String)
    case environment(String)

    /// The environment variable consulted when no file is given.
    public static let environmentVariable = "DEVPROXY_CA_PASSPHRASE"

    /// `--passphrase-file` wins; else `variable` (`DEVPROXY_CA_PASSPHRASE`) when set; else none.
    public static func resolve(file: String?, variable: String = environmentVariable,
                               environment: [String: String] = ProcessInfo.processInfo.environment)
        -> PassphraseSource {
        if let file { return .file(file) }
        if let value = environment[variable], !value.isEmpty { return .environment(variable) }
        return .none
    }

    /// The passphrase, with one trailing newline removed from a file.
    ///
    /// - Throws: `.notFound` when the file cannot be read, `.invalidInput` when it is empty or not
    ///   text (bytes that are not UTF-8, or a NUL).
    public func read(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        switch self {
        case .none:
            return nil
        case .environment(let name):
            return environment[name]
        case .file(let path):
            let bytes = try SecureFile.read(path, what: "the passphrase file")
            // Random bytes (`openssl rand 32 > root.pass`) were read as UTF-8 with every invalid byte
            // turned into U+FFFD, so other files with the same valid bytes opened the key, and
            // OpenSSL passes a passphrase as a C string: a NUL byte ended it there.
            guard let decoded = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
                throw CAError(.invalidInput, "the passphrase file \(path) holds binary bytes, not text; a passphrase is "
                              + "text: make one with `openssl rand -base64 32 > \(path)`")
            }
            var text = decoded
            // One Character either way: Swift reads CR LF as a single grapheme, and `removeLast(2)`
            // also took the passphrase's last character (a file saved with Windows line endings).
            if text.hasSuffix("\r\n") || text.hasSuffix("\n") { text.removeLast() }
            guard !text.isEmpty else { throw CAError(.invalidInput, "the passphrase file \(path) is empty") }
            return text
        }
    }
}
