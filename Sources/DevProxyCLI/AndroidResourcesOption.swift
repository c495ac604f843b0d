import DevProxy
import Foundation
import PinningPolicy

/// `--res DIR|APP.apk` of `policy check` and `pin-check`: where an Android config's
/// `<certificates src="@raw/name"/>` trust anchors are read from, found the same way by both.
enum AndroidResourcesOption {
    /// The app's resources: `--res DIR` or `--res APP.apk`, else the res directory the policy is
    /// in (`res/xml/network_security_config.xml` → `res`) when it has a `raw/`.
    ///
    /// - Parameters:
    ///   - given: the `--res` value, or nil.
    ///   - policy: the policy's path, to find its res directory alone.
    ///   - data: the policy's bytes, for the resource names to take out of an `.apk`.
    /// - Returns: nil when none was given or found.
    /// - Throws: `CommandFailure` when `--res` names nothing, or neither a directory nor an `.apk`.
    static func resolve(_ given: String?, policyPath policy: String, policy data: Data,
                        kind: PolicySource?) throws -> AndroidResources? {
        var isDirectory: ObjCBool = false
        if let given {
            let hint = "give the app's res directory (the one holding xml/ and raw/) or its .apk"
            guard FileManager.default.fileExists(atPath: given, isDirectory: &isDirectory) else {
                throw CommandFailure("--res \(given): no such file or directory; \(hint)")
            }
            if isDirectory.boolValue { return .directory(given) }
            guard AndroidPackage.isPackage(given) else { throw CommandFailure("--res \(given): not a directory or an .apk; \(hint)") }
            guard let parsed = try? PolicyLoader.load(data: data, kind: kind), parsed.source == .androidNSC else { return nil }
            let names = Set(PolicyCheck.rawResources(of: parsed).map { String($0.dropFirst("@raw/".count)) })
            do {
                return .package(given, raw: try AndroidPackage.rawFiles(in: given, named: names))
            } catch {
                throw CommandFailure("--res \(given): \(error.reason)")
            }
        }
        let xml = (policy as NSString).deletingLastPathComponent
        guard (xml as NSString).lastPathComponent.hasPrefix("xml") else { return nil }
        let res = (xml as NSString).deletingLastPathComponent
        let raw = (res.isEmpty ? "." : res) + "/raw"
        return FileManager.default.fileExists(atPath: raw, isDirectory: &isDirectory) && isDirectory.boolValue
            ? .directory(res.isEmpty ? "." : res) : nil
    }
}
