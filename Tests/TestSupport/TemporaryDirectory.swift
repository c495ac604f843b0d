import Foundation

/// A fresh directory under /tmp, removed when the value is released.
public final class TemporaryDirectory {
    public let path: String

    public init() {
        var template = Array((NSTemporaryDirectory() + "devproxy-test-XXXXXX").utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// `path/name`.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` and returns the full path.
    @discardableResult
    public func write(_ name: String, _ text: String) -> String {
        _ = FileManager.default.createFile(atPath: file(name), contents: Data(text.utf8))
        return file(name)
    }

    /// Writes `bytes` to `name` and returns the full path.
    @discardableResult
    public func write(_ name: String, bytes: [UInt8]) -> String {
        _ = FileManager.default.createFile(atPath: file(name), contents: Data(bytes))
        return file(name)
    }

    public func read(_ name: String) -> String {
        (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? ""
    }

    /// The permission bits of `name`.
    public func mode(_ name: String) -> Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: name.hasPrefix("/") ? name : file(name))
        return ((attributes?[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777
    }
}
