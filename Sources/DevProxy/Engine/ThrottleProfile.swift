import Foundation

/// A simulated network link (`--throttle`): download and upload bandwidth and an added round-trip
/// latency, as Chrome DevTools' "Network throttling", Charles' "Throttle Settings" and Proxyman's
/// "Network Conditions" offer.
public struct ThrottleProfile: Sendable, Equatable, CustomStringConvertible {
    /// The preset's name (`slow-4g`), or the profile as given (`1.6mbit/750kbit/150ms`).
    public let name: String
    /// Bytes a second DevProxy sends to the client (the client's download).
    public let downloadBytesPerSecond: Double
    /// Bytes a second DevProxy reads from the client (the client's upload).
    public let uploadBytesPerSecond: Double
    /// Seconds a response waits at least after the request's last byte (a minimum round trip).
    public let latency: TimeInterval
    /// Chrome's Offline: no network at all. Each new request or connection fails (DevProxy closes
    /// it without an answer, or resets the HTTP/2 stream), and switched on while connections are
    /// open it cuts what flows on them (`ProxyServer.cutOffline`); the rates and latency mean nothing.
    public let offline: Bool

    public init(name: String, downloadBytesPerSecond: Double, uploadBytesPerSecond: Double, latency: TimeInterval,
                offline: Bool = false) {
        self.name = name
        self.downloadBytesPerSecond = downloadBytesPerSecond
        self.uploadBytesPerSecond = uploadBytesPerSecond
        self.latency = latency
        self.offline = offline
    }

    /// Chrome DevTools' presets, with the figures Chrome applies (front_end/core/sdk/NetworkManager.ts,
    /// `Fast4GConditions`, `Slow4GConditions`, `Slow3GConditions`, June 2024 on): the nominal
    /// bandwidth times 0.9 (0.8 for 3G), and the target round trip times 2.75, 3.75 and 5, because
    /// Chrome adds its latency once per request where a real link pays it on every round trip.
    /// `3g` was "Slow 3G" until May 2024; `slow-3g` is taken for it too.
    public static let presets: [ThrottleProfile] = [
        ThrottleProfile(name: "fast-4g", downloadBytesPerSecond: 9_000_000 / 8 * 0.9,
                        uploadBytesPerSecond: 1_500_000 / 8 * 0.9, latency: 0.060 * 2.75),
        ThrottleProfile(name: "slow-4g", downloadBytesPerSecond: 1_600_000 / 8 * 0.9,
                        uploadBytesPerSecond: 750_000 / 8 * 0.9, latency: 0.150 * 3.75),
        ThrottleProfile(name: "3g", downloadBytesPerSecond: 500_000 / 8 * 0.8,
                        uploadBytesPerSecond: 500_000 / 8 * 0.8, latency: 0.400 * 5),
        // DevTools' Offline (`OfflineConditions`): every request fails.
        ThrottleProfile(name: "offline", downloadBytesPerSecond: 1, uploadBytesPerSecond: 1, latency: 0, offline: true),
    ]

    /// Other names a preset answers to.
    private static let aliases = ["slow-3g": "3g"]

    /// A preset's name, or `DOWN/UP/LATENCY`: rates in `kbit` or `mbit` (a second; 1 kbit = 1000
    /// bits), the latency in `ms` or `s` (`1.6mbit/750kbit/150ms`, `500kbit/500kbit/0ms`).
    /// - Throws: `ConfigurationError` naming the presets and the form.
    public init(parsing text: String) throws {
        let lowered = text.lowercased()
        let name = Self.aliases[lowered] ?? lowered
        if let preset = Self.presets.first(where: { $0.name == name }) {
            self = preset
            return
        }
        let parts = lowered.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let down = Self.rate(parts[0]), let up = Self.rate(parts[1]),
              let latency = Self.seconds(parts[2]) else {
            throw ConfigurationError("--throttle \(text): not a profile; use a preset ("
                                     + Self.presets.map(\.name).joined(separator: ", ")
                                     + ") or DOWN/UP/LATENCY, rates in kbit or mbit a second and the latency in ms "
                                     + "(1.6mbit/750kbit/150ms)")
        }
        self.init(name: text, downloadBytesPerSecond: down, uploadBytesPerSecond: up, latency: latency)
    }

    /// `750kbit`, `1.6mbit` as bytes a second; nil when malformed, not above 0, or past 10 gbit.
    private static func rate(_ text: String) -> Double? {
        let units: [(String, Double)] = [("kbit", 1_000), ("mbit", 1_000_000)]
        guard let (suffix, bits) = units.first(where: { text.hasSuffix($0.0) }),
              let value = Double(text.dropLast(suffix.count)), value.isFinite, value > 0 else { return nil }
        let bytes = value * bits / 8
        return bytes >= 1 && bytes <= 10_000_000_000 / 8 ? bytes : nil
    }

    /// `150ms`, `2s` as seconds, 0 to 60 s; nil when malformed.
    private static func seconds(_ text: String) -> TimeInterval? {
        let (digits, scale) = text.hasSuffix("ms") ? (text.dropLast(2), 0.001)
            : text.hasSuffix("s") ? (text.dropLast(1), 1.0) : (Substring(""), 0)
        guard let value = Double(digits), value.isFinite, value >= 0, value * scale <= 60 else { return nil }
        return value * scale
    }

    /// `slow-4g (1.44 Mbit/s down, 675 kbit/s up, +563 ms)`, as the run's banner says it.
    public var description: String {
        if offline { return "\(name) (no network: requests fail, those in flight are cut)" }
        return "\(name) (\(Self.rateText(downloadBytesPerSecond)) down, \(Self.rateText(uploadBytesPerSecond)) up, "
            + "+\(Int((latency * 1000).rounded())) ms)"
    }

    /// A rate in bytes a second as `1.44 Mbit/s` or `675 kbit/s`.
    private static func rateText(_ bytesPerSecond: Double) -> String {
        let bits = bytesPerSecond * 8
        func trimmed(_ value: Double) -> String {
            var text = String(format: "%.2f", value)
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            return text
        }
        return bits >= 1_000_000 ? "\(trimmed(bits / 1_000_000)) Mbit/s" : "\(trimmed(bits / 1_000)) kbit/s"
    }
}
