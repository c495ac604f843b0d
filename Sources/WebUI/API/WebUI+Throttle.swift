import CertAuthority
import DevProxy
import Foundation

/// `/api/throttle`: the network conditions while the proxy runs, as Chrome DevTools' throttling
/// menu, Charles's Throttle toggle and Proxyman's Network Conditions change them (docs/web-ui.md).
extension WebUI {
    func throttle(_ request: WebRequest) -> WebResponse {
        guard let conditions = proxy?.throttleSwitch else {
            return .error(409, "nothing to throttle: this web UI shows a saved session, no proxy runs behind it")
        }
        switch request.method {
        case "GET": return .json(object: Self.throttleJSON(conditions.setting))
        case "PUT": break
        default: return .error(405, "\(request.method) is not allowed on \(request.path): GET or PUT")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
            return .error(400, "the body must be a JSON object: {\"profile\": \"slow-4g\" or null, "
                               + "\"hosts\": [\"*.example.com\"]}")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "profile" && $0 != "hosts" }) {
            return .error(400, "unknown key \(unknown): give profile, hosts or both")
        }
        let current = conditions.setting
        var hosts = current?.hosts ?? []
        switch object["hosts"] {
        case nil: break
        case let names as [Any]:
            guard let names = names as? [String], names.allSatisfy({ !$0.isEmpty && $0.count <= 253 }) else {
                return .error(400, "hosts must be a list of host names or globs (*.example.com); [] for every connection")
            }
            hosts = names.map(GlobPattern.init)
        default: return .error(400, "hosts must be a list of host names or globs (*.example.com); [] for every connection")
        }
        var profile = current?.profile
        switch object["profile"] {
        case nil: break
        case is NSNull: profile = nil
        case let text as String:
            do {
                profile = try ThrottleProfile(parsing: text)
            } catch let error as ConfigurationError {
                // Its reason names the flag; here the field was given.
                return .error(400, error.description.replacingOccurrences(of: "--throttle \(text):", with: "profile \(text):"))
            } catch {
                return .error(400, "profile \(text): \(error)")
            }
        default: return .error(400, "profile must be a preset's name, DOWN/UP/LATENCY, or null for full speed")
        }
        let setting = profile.map { ThrottleSwitch.Setting(profile: $0, hosts: hosts) }
        if setting != current { conditions.set(setting) }
        return .json(object: Self.throttleJSON(setting))
    }

    /// `{"throttle": {profile, description, hosts} or null, "presets": [{name, description}]}`.
    static func throttleJSON(_ setting: ThrottleSwitch.Setting?) -> [String: Any] {
        ["throttle": setting.map(throttleObject) ?? NSNull(),
         "presets": ThrottleProfile.presets.map { ["name": $0.name, "description": $0.description] }]
    }

    /// `/api/info`'s `throttle`: the profile, as the banner says it, and the hosts it slows.
    static func throttleObject(_ setting: ThrottleSwitch.Setting) -> [String: Any] {
        ["profile": setting.profile.name, "description": setting.profile.description,
         "hosts": setting.hosts.map(\.pattern)]
    }
}
