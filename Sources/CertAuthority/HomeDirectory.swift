import Foundation

/// The user's home directory as every Unix tool reads it: `$HOME` when set, else the account's
/// (`getpwuid`, which `NSHomeDirectory()` returns on Linux whatever `$HOME` says).
public enum HomeDirectory {
    public static func current(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    }
}
