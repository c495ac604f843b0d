import Foundation

/// Runs real programs (openssl, curl, python3, devproxy) for tests, with a time limit.
public struct Subprocess {
    /// What a finished process left behind.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// stdout and stderr together, for assertions that don't care which.
        public var output: String { stdout + stderr }
    }

    /// Runs `executable` (looked up on PATH unless absolute) and waits at most `timeout` seconds.
    ///
    /// - Parameters:
    ///   - stdin: bytes to feed on standard input (closed afterwards).
    ///   - environment: extra variables on top of this process's environment.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], stdin: [UInt8] = [],
                           environment: [String: String] = [:], directory: String? = nil,
                           timeout: TimeInterval = 60) throws -> Result {
        let process = Process()
        if executable.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let outPipe = Pipe(), errPipe = Pipe(), inPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe
        try process.run()
        inPipe.fileHandleForWriting.write(Data(stdin))
        try? inPipe.fileHandleForWriting.close()
        // Drain both pipes on threads of our own so a chatty child never blocks on a full pipe.
        let out = PipeDrain(outPipe.fileHandleForReading), err = PipeDrain(errPipe.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw TestFailure("\(executable) \(arguments.joined(separator: " ")) timed out after \(timeout) s")
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: out.finish(), stderr: err.finish())
    }

    /// The `devproxy` executable built beside the test bundle.
    public static var devproxy: String { productsDirectory + "/devproxy" }

    /// The build products directory (where the xctest bundle and executables live).
    public static var productsDirectory: String {
        let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }?.bundlePath
            ?? CommandLine.arguments.first { $0.contains(".xctest") } ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: bundle)
        while url.path != "/" && !url.lastPathComponent.hasSuffix(".xctest") { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent().path
    }
}

/// Reads a pipe to its end on a dedicated thread.
public final class PipeDrain: @unchecked Sendable {
    // `data` is written by the reader thread only, then read after `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    public init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
        thread.start()
    }

    public func finish() -> String {
        done.wait()
        return String(decoding: data, as: UTF8.self)
    }

    /// What was read, once the pipe reached its end; nil if that takes longer than `timeout` seconds.
    public func finish(timeout: TimeInterval) -> String? {
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A failure in test plumbing (not an assertion).
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
