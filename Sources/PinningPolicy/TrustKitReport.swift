import CertAuthority
import Foundation

/// The pin-failure report a TrustKit app POSTs (`TSKPinFailureReport -json`): exactly 16 keys on
/// iOS. Decoding also accepts TrustKit-Android's shape (no `app-platform-version` nor
/// `known-pins-expiration-date`, plus `served-certificate-chain`).
public struct TrustKitReport: Codable, Sendable, Equatable {
    public var appBundleID: String
    public var appVersion: String
    public var appPlatform: String
    public var appPlatformVersion: String?
    public var appVendorID: String
    public var trustKitVersion: String
    public var dateTime: String
    public var hostname: String
    /// Always 0 in reports TrustKit sends (`port:nil` → `@0`).
    public var port: Int
    public var notedHostname: String
    public var includeSubdomains: Bool
    public var enforcePinning: Bool
    /// PEM, leaf first, base64 wrapped at 64 columns with CRLF.
    public var validatedCertificateChain: [String]
    /// `pin-sha256="…"` strings.
    public var knownPins: [String]
    public var validationResult: Int
    /// `yyyy-MM-dd` or null; encoded as an explicit null.
    public var knownPinsExpirationDate: String?
    /// TrustKit-Android only.
    public var servedCertificateChain: [String]?

    private enum CodingKeys: String, CodingKey {
        case appBundleID = "app-bundle-id", appVersion = "app-version", appPlatform = "app-platform"
        case appPlatformVersion = "app-platform-version", appVendorID = "app-vendor-id"
        case trustKitVersion = "trustkit-version", dateTime = "date-time", hostname, port
        case notedHostname = "noted-hostname", includeSubdomains = "include-subdomains"
        case enforcePinning = "enforce-pinning", validatedCertificateChain = "validated-certificate-chain"
        case knownPins = "known-pins", validationResult = "validation-result"
        case knownPinsExpirationDate = "known-pins-expiration-date", servedCertificateChain = "served-certificate-chain"
    }

    /// The app facts a report carries.
    public struct App: Sendable {
        public var bundleID: String
        public var version: String
        /// `IOS`, `TVOS`, `WATCHOS`, `MACOS`.
        public var platform: String
        public var platformVersion: String
        public var vendorID: String
        /// `TrustKitVersion`: "3.0.0" in every 3.0.x tag.
        public var trustKitVersion: String

        public init(bundleID: String = "N/A", version: String = "", platform: String = "IOS",
                    platformVersion: String = "17.0.0", vendorID: String = UUID().uuidString,
                    trustKitVersion: String = "3.0.0") {
            (self.bundleID, self.version, self.platform) = (bundleID, version, platform)
            (self.platformVersion, self.vendorID, self.trustKitVersion) = (platformVersion, vendorID, trustKitVersion)
        }
    }

    /// Builds the report TrustKit sends for `evaluation`, or nil when it sends none
    /// (success, or validation never reached).
    public static func make(for evaluation: PinEvaluation, host: String, app: App, at date: Date) -> TrustKitReport? {
        guard let result = evaluation.validationResult, result != .success, let entry = evaluation.entry else { return nil }
        let formatter = TrustKitDate.dayFormatter(timeZone: TimeZone(identifier: "UTC")!)
        return TrustKitReport(
            appBundleID: app.bundleID, appVersion: app.version, appPlatform: app.platform,
            appPlatformVersion: app.platformVersion, appVendorID: app.vendorID, trustKitVersion: app.trustKitVersion,
            dateTime: TrustKitDate.reportTimestamp(date), hostname: host, port: 0,
            notedHostname: entry.pattern, includeSubdomains: entry.includeSubdomains, enforcePinning: entry.enforce,
            validatedCertificateChain: evaluation.evaluatedChain.map { pem($0.der) },
            knownPins: entry.pins.map(\.directive), validationResult: result.rawValue,
            knownPinsExpirationDate: entry.expiration.map { formatter.string(from: $0) }, servedCertificateChain: nil)
    }

    /// TrustKit's PEM: `\n` after BEGIN, 64-column base64 lines joined by CRLF, `\n` before END.
    public static func pem(_ der: [UInt8]) -> String {
        let body = Data(der).base64EncodedString().chunked64.joined(separator: "\r\n")
        return "-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----"
    }

    public init(appBundleID: String, appVersion: String, appPlatform: String, appPlatformVersion: String?,
                appVendorID: String, trustKitVersion: String, dateTime: String, hostname: String, port: Int,
                notedHostname: String, includeSubdomains: Bool, enforcePinning: Bool,
                validatedCertificateChain: [String], knownPins: [String], validationResult: Int,
                knownPinsExpirationDate: String?, servedCertificateChain: [String]?) {
        (self.appBundleID, self.appVersion, self.appPlatform) = (appBundleID, appVersion, appPlatform)
        (self.appPlatformVersion, self.appVendorID, self.trustKitVersion) = (appPlatformVersion, appVendorID, trustKitVersion)
        (self.dateTime, self.hostname, self.port, self.notedHostname) = (dateTime, hostname, port, notedHostname)
        (self.includeSubdomains, self.enforcePinning) = (includeSubdomains, enforcePinning)
        (self.validatedCertificateChain, self.knownPins) = (validatedCertificateChain, knownPins)
        (self.validationResult, self.knownPinsExpirationDate) = (validationResult, knownPinsExpirationDate)
        self.servedCertificateChain = servedCertificateChain
    }

    /// Writes the iOS keys, with `known-pins-expiration-date` as an explicit null when absent.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(appBundleID, forKey: .appBundleID)
        try container.encode(appVersion, forKey: .appVersion)
        try container.encode(appPlatform, forKey: .appPlatform)
        try container.encodeIfPresent(appPlatformVersion, forKey: .appPlatformVersion)
        try container.encode(appVendorID, forKey: .appVendorID)
        try container.encode(trustKitVersion, forKey: .trustKitVersion)
        try container.encode(dateTime, forKey: .dateTime)
        try container.encode(hostname, forKey: .hostname)
        try container.encode(port, forKey: .port)
        try container.encode(notedHostname, forKey: .notedHostname)
        try container.encode(includeSubdomains, forKey: .includeSubdomains)
        try container.encode(enforcePinning, forKey: .enforcePinning)
        try container.encode(validatedCertificateChain, forKey: .validatedCertificateChain)
        try container.encode(knownPins, forKey: .knownPins)
        try container.encode(validationResult, forKey: .validationResult)
        try container.encode(knownPinsExpirationDate, forKey: .knownPinsExpirationDate)
        try container.encodeIfPresent(servedCertificateChain, forKey: .servedCertificateChain)
    }
}

extension String {
    /// The string cut into 64-character pieces.
    var chunked64: [String] {
        var pieces: [String] = []
        var rest = Substring(self)
        while !rest.isEmpty {
            pieces.append(String(rest.prefix(64)))
            rest = rest.dropFirst(64)
        }
        return pieces
    }
}
