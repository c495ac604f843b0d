import CertAuthority
import Foundation

/// Loads a pinning policy from a file, recognising its kind from the content.
public enum PolicyLoader {
    /// What a file looks like.
    public static func detect(_ data: Data) -> PolicySource {
        if data.starts(with: Array("bplist".utf8)) {
            // A TrustKit Info.plist may also hold NSAppTransportSecurity: TrustKit wins, as before.
            let info = (try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: Any] ?? [:]
            let trustKit = info["TSKConfiguration"] != nil || info["TSKPinnedDomains"] != nil
            return !trustKit && info["NSAppTransportSecurity"] != nil ? .ats : .trustKit
        }
        let text = String(decoding: data.prefix(1 << 20), as: UTF8.self)
        if text.contains("<network-security-config") { return .androidNSC }
        if text.contains("TSKPinnedDomains") || text.contains("TSKConfiguration") { return .trustKit }
        if text.contains("NSAppTransportSecurity") { return .ats }
        if text.contains("<plist") { return .trustKit }
        if text.drop(while: \.isWhitespace).first == "{" {
            if let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] {
                return object["kind"] as? String == "custom" ? .custom : .trustKit
            }
            // Broken JSON is reported by the parser it was meant for, not as a TrustKit policy.
            return text.range(of: #""kind"\s*:\s*"custom""#, options: .regularExpression) != nil ? .custom : .trustKit
        }
        return .okHttp
    }

    /// Why `data`, which `detect` would read as an OkHttp pin list (its fallback), is no policy at
    /// all; nil when it may be one. The wrong file (an Android layout, a Kotlin class without a
    /// pinner, a binary) was read as pins, and its first word reported as an invalid pattern that
    /// "the OkHttp library refuses": the app crashing at start-up, said of a file it never loads.
    public static func notAPolicy(_ data: Data) -> String? {
        guard detect(data) == .okHttp else { return nil }
        let bytes = [UInt8](data.prefix(1 << 20))
        if bytes.contains(0) || String(validating: bytes, as: UTF8.self) == nil {
            return "it is not text, so not a policy DevProxy reads (a TrustKit plist or JSON, network_security_config.xml, "
                + "an ATS Info.plist, an OkHttp pin list or pinner source, a custom pinner JSON)"
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let start = text.drop { $0.isWhitespace || $0 == "\u{FEFF}" }
        if start.hasPrefix("<") {
            let root = xmlRoot(start) ?? "?"
            return "it is XML whose root element is <\(root)>, not <network-security-config> (Android) or a property "
                + "list (TrustKit, ATS)"
        }
        if !text.contains("CertificatePinner.Builder("), text.range(of: #"(?m)^\s*(package|import|class|fun|public|private|object)\b"#,
                                                                 options: .regularExpression) != nil {
            return "it looks like Kotlin or Java source without a CertificatePinner.Builder(): no pins to check (give the "
                + "file that builds the pinner, or its pins as `pattern sha256/…` lines)"
        }
        return nil
    }

    /// The name of the first element of an XML text (after its declaration and comments).
    private static func xmlRoot(_ text: Substring) -> String? {
        var rest = text
        while let open = rest.firstIndex(of: "<") {
            let after = rest[rest.index(after: open)...]
            if after.hasPrefix("?") || after.hasPrefix("!") {
                guard let close = after.firstIndex(of: ">") else { return nil }
                rest = after[after.index(after: close)...]
                continue
            }
            return String(after.prefix { !$0.isWhitespace && $0 != ">" && $0 != "/" })
        }
        return nil
    }

    /// Reads and parses the policy at `path`.
    ///
    /// - Parameters:
    ///   - path: an Info.plist / TrustKit plist or JSON, a network_security_config.xml, an
    ///     OkHttp pin list or Kotlin/Java source, a `custom` pinner JSON (`"kind": "custom"`).
    ///   - timeZone: the device time zone for Android pin-set expiration.
    /// - Throws: `PolicyError(.unreadable)` when the file cannot be read, else the parser's error.
    public static func load(path: String, timeZone: TimeZone = .current) throws -> PinningPolicy {
        let bytes: [UInt8]
        do {
            bytes = try SecureFile.contents(of: path)
        } catch {
            throw PolicyError(.unreadable, "cannot read it: \(error.reason)")
        }
        return try load(data: Data(bytes), timeZone: timeZone)
    }

    /// Parses policy bytes of any supported kind.
    /// - Parameter kind: read the file as this kind instead of guessing (an Info.plist with both
    ///   TrustKit and ATS keys is read as TrustKit unless `.ats` is asked for).
    public static func load(data: Data, timeZone: TimeZone = .current, kind: PolicySource? = nil) throws -> PinningPolicy {
        switch kind ?? detect(data) {
        case .trustKit: return try TrustKitPolicyParser().parse(data)
        case .androidNSC: return try AndroidNSCParser(timeZone: timeZone).parse(data)
        case .okHttp: return try OkHttpPinnerParser().parse(String(decoding: data, as: UTF8.self))
        case .custom: return try CustomPinnerPolicyParser().parse(data)
        case .ats: return try ATSPolicyParser().parse(data)
        }
    }
}
