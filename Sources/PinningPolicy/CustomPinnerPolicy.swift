import CertAuthority
import Foundation

/// A hand-written pinner (a `URLSessionDelegate` or `X509TrustManager` of the app's own), as a
/// policy of kind `custom`: what it hashes, which certificates of the chain it looks at, and
/// the pins it holds.
///
/// ```json
/// {"kind": "custom", "name": "CertificatePinner", "hash": "raw-key", "scope": "any",
///  "hosts": ["api.acme.dev", "*.cdn.acme.dev"], "pins": ["YLh1…=", "sha256/Vjs8…="], "enforce": true}
/// ```
/// Both reference pinners evaluate the platform trust first (`SecTrustEvaluateWithError`), so an
/// untrusted chain is refused before any pin is looked at; that is assumed here too.
public struct CustomPinner: Sendable, Equatable {
    /// Which certificates of the evaluated chain (leaf first, anchor last) the pinner hashes.
    public enum Scope: String, Sendable, CaseIterable, Codable {
        /// Every certificate, anchor included (`SecTrustCopyCertificateChain`, any index).
        case any
        /// The leaf only (`chain.first`): no CA, the team's included, can satisfy it.
        case leaf
        /// Every certificate but the leaf.
        case ca

        public static var choices: String { allCases.map(\.rawValue).joined(separator: ", ") }
    }

    /// A label for messages (the class name in the app); default `custom pinner`.
    public var name: String
    public var hash: PinHashForm
    public var scope: Scope
    /// `api.acme.dev` (exact, any case), `*.acme.dev` (any name below it), or `*` (every host).
    public var hosts: [String]
    /// SHA-256 digests in `hash` form, duplicates removed, file order.
    public var pins: [Pin]
    /// False when a mismatch is only logged. Default true.
    public var enforce: Bool

    public init(name: String = "custom pinner", hash: PinHashForm, scope: Scope, hosts: [String], pins: [Pin],
                enforce: Bool = true) {
        self.name = name
        self.hash = hash
        self.scope = scope
        self.hosts = hosts
        self.pins = pins
        self.enforce = enforce
    }

    /// Whether `pattern` (one of `hosts`) covers `host`.
    public static func matches(_ pattern: String, _ host: String) -> Bool {
        let pattern = pattern.lowercased()
        var host = host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        if pattern == "*" { return true }
        if pattern.hasPrefix("*.") { return host.hasSuffix(pattern.dropFirst(1)) && host.count > pattern.count - 1 }
        return pattern == host
    }

    /// The certificates of `path` (leaf first) the pinner hashes.
    public func examined(_ path: [Certificate]) -> [Certificate] {
        switch scope {
        case .any: return path
        case .leaf: return Array(path.prefix(1))
        case .ca: return Array(path.dropFirst())
        }
    }
}

/// Parses a `custom` policy file (JSON).
public struct CustomPinnerPolicyParser: Sendable {
    static let keys: Set<String> = ["kind", "name", "hash", "scope", "hosts", "pins", "enforce"]

    public init() {}

    /// - Throws: `PolicyError` naming the key at fault: `.unreadable` for JSON that is not an
    ///   object, `.invalidValue` for an unknown `hash`/`scope` or a wrong type, `.invalidPin`,
    ///   `.invalidDomain`, `.tooFewPins` for no pins.
    public func parse(_ data: Data) throws -> PinningPolicy {
        let object: [String: Any]
        do {
            object = try JSONDocument.object([UInt8](data))
        } catch {
            throw PolicyError(.unreadable, "a custom policy must be one JSON object; this is \(error.reason)")
        }
        if let unknown = object.keys.filter({ !Self.keys.contains($0) && !$0.hasPrefix("_") }).sorted().first {
            let known = Self.keys.sorted().joined(separator: ", ")
            throw PolicyError(.invalidValue, "unknown key \"\(unknown)\" (known: \(known))")
        }
        guard object["kind"] as? String == "custom" else {
            throw PolicyError(.invalidValue, "\"kind\" must be \"custom\"")
        }
        let hashName = try string(object, "hash")
        guard let hash = PinHashForm(rawValue: hashName) else {
            throw PolicyError(.invalidValue, "unknown hash \"\(hashName)\"; use one of \(PinHashForm.choices)")
        }
        let scopeName = try string(object, "scope")
        guard let scope = CustomPinner.Scope(rawValue: scopeName) else {
            throw PolicyError(.invalidValue, "unknown scope \"\(scopeName)\"; use one of \(CustomPinner.Scope.choices)")
        }
        guard let hosts = object["hosts"] as? [String], !hosts.isEmpty else {
            throw PolicyError(.invalidValue, "\"hosts\" must be a non-empty list of host names")
        }
        for host in hosts where !Self.validHost(host) {
            throw PolicyError(.invalidDomain, "host \"\(host)\" is not a name, *.name or *")
        }
        guard let texts = object["pins"] as? [String] else {
            throw PolicyError(.invalidValue, "\"pins\" must be a list of base64 SHA-256 digests")
        }
        var pins: [Pin] = []
        for text in texts {
            let pin = try Self.pin(text)
            if !pins.contains(pin) { pins.append(pin) }
        }
        guard !pins.isEmpty else { throw PolicyError(.tooFewPins, "\"pins\" is empty: the pinner would refuse every host") }
        let enforce: Bool
        switch object["enforce"] {
        case nil: enforce = true
        case let value as Bool: enforce = value
        default: throw PolicyError(.invalidValue, "\"enforce\" must be true or false")
        }
        if let name = object["name"], !(name is String) { throw PolicyError(.invalidValue, "\"name\" must be a string") }
        let pinner = CustomPinner(name: object["name"] as? String ?? "custom pinner", hash: hash, scope: scope,
                                  hosts: hosts, pins: pins, enforce: enforce)
        let domains = hosts.map {
            PinnedDomain(pattern: $0, includeSubdomains: $0.hasPrefix("*"), pins: pins, enforce: enforce, source: .custom)
        }
        return PinningPolicy(source: .custom, domains: domains, customPinner: pinner)
    }

    /// A pin as the articles write it (bare base64) or with OkHttp's `sha256/` prefix.
    static func pin(_ text: String) throws -> Pin {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if body.hasPrefix("sha256/") { body = body.dropFirst(7) }
        guard let data = Data(base64Encoded: String(body)), data.count == 32 else {
            throw PolicyError(.invalidPin, "pin \"\(text)\" is not the base64 of a SHA-256 digest (32 bytes)")
        }
        return Pin(.sha256, digest: [UInt8](data))
    }

    private static func validHost(_ host: String) -> Bool {
        if host == "*" { return true }
        let name = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
        return !name.isEmpty && !name.contains("*") && !name.contains(" ") && !name.hasPrefix(".")
    }

    private func string(_ object: [String: Any], _ key: String) throws -> String {
        guard let value = object[key] as? String else { throw PolicyError(.invalidValue, "\"\(key)\" (a string) is required") }
        return value
    }
}
