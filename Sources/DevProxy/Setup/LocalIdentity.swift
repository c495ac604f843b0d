import Foundation

/// Who is running DevProxy: the email an intermediate is issued for.
public enum LocalIdentity {
    /// `git config user.email` when set, else `$USER@<hostname>` (with `.local` added to a
    /// dotless host name so it is a valid address).
    public static func email(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let override = environment["DEVPROXY_EMAIL"], !override.isEmpty { return override }
        if let git = gitEmail(), !git.isEmpty { return git }
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "developer"
        var host = ProcessInfo.processInfo.hostName.lowercased()
        if host.isEmpty || host == "localhost" { host = "devproxy" }
        if !host.contains(".") { host += ".local" }
        return "\(user)@\(host)"
    }

    private static func gitEmail() -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "config", "user.email"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
