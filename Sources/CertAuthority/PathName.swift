/// A path's directory and last component, as `NSString`'s `deletingLastPathComponent` and
/// `lastPathComponent` give them, without Foundation: on Linux (swift-corelibs-foundation,
/// Swift 6.0) `("a" as NSString).deletingLastPathComponent` traps on any one-character path, so
/// `--har a` or `--log x` crashed before the proxy started.
public enum PathName {
    /// The directory part of `path`: `""` for a bare name (`flows.jsonl`, `a`), `"/"` for a name
    /// in the root, else everything before the last `/` with trailing slashes dropped.
    public static func directory(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let parent = trimmingTrailingSlashes(String(trimmed[..<slash]))
        return parent.isEmpty ? "/" : parent
    }

    /// The last component of `path` (`a` of `dir/a` and of `dir/a/`); `"/"` for the root.
    public static func lastComponent(of path: String) -> String {
        let trimmed = trimmingTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return trimmed }
        let name = trimmed[trimmed.index(after: slash)...]
        return name.isEmpty ? "/" : String(name)
    }

    /// `name` in `directory` (`name` alone when `directory` is empty).
    public static func join(_ directory: String, _ name: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// `path` without its trailing slashes, the root staying `/`.
    private static func trimmingTrailingSlashes(_ path: String) -> String {
        var end = path.endIndex
        while end > path.startIndex, path[path.index(before: end)] == "/" { end = path.index(before: end) }
        if end == path.startIndex { return path.isEmpty ? "" : "/" }
        return String(path[..<end])
    }
}
