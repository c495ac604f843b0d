/// Which pinning library a policy comes from; it decides the lookup and evaluation rules.
public enum PolicySource: String, Sendable, Codable, CaseIterable {
    /// TrustKit for iOS/macOS (`TSKConfiguration`).
    case trustKit
    /// Android Network Security Configuration (`network_security_config.xml`).
    case androidNSC
    /// OkHttp's `CertificatePinner`.
    case okHttp
    /// A hand-written pinner described by a JSON file of kind `custom` (`CustomPinner`).
    case custom
    /// App Transport Security: an Info.plist's `NSAppTransportSecurity` (`ATSPolicy`).
    case ats
}
