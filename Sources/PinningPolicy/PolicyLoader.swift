import Foundation

/// Loads a pinning policy from a file, recognising its kind from the content.
public enum PolicyLoader {
    /// What a file looks like.
    public static func detect(_ data: Data) -> PolicySource {
        if data.starts(with: Array("bplist".utf8)) { return .trustKit }
        let text = String(decoding: data.prefix(1 << 20), as: UTF8.self)
        if text.contains("<network-security-config") { return .androidNSC }
        if text.contains("TSKPinnedDomains") || text.contains("TSKConfiguration") || text.contains("<plist") {
            return .trustKit
        }
        if text.drop(while: \.isWhitespace).first == "{" {
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            return object?["kind"] as? String == "custom" ? .custom : .trustKit
        }
        return .okHttp
    }

    /// Reads and parses the policy at `path`.
    ///
    /// - Parameters:
    ///   - path: an Info.plist / TrustKit plist or JSON, a network_security_config.xml, an
    ///     OkHttp pin list or Kotlin/Java source, a `custom` pinner JSON (`"kind": "custom"`).
    ///   - timeZone: the device time zone for Android pin-set expiration.
    /// - Throws: `PolicyError(.unreadable)` when the file cannot be read, else the parser's error.
    public static func load(path: String, timeZone: TimeZone = .current) throws -> PinningPolicy {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PolicyError(.unreadable, "cannot read \(path)")
        }
        return try load(data: data, timeZone: timeZone)
    }

    /// Parses policy bytes of any supported kind.
    public static func load(data: Data, timeZone: TimeZone = .current) throws -> PinningPolicy {
        switch detect(data) {
        case .trustKit: return try TrustKitPolicyParser().parse(data)
        case .androidNSC: return try AndroidNSCParser(timeZone: timeZone).parse(data)
        case .okHttp: return try OkHttpPinnerParser().parse(String(decoding: data, as: UTF8.self))
        case .custom: return try CustomPinnerPolicyParser().parse(data)
        }
    }
}
