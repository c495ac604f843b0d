import CertAuthority
import Foundation

/// A ready-to-paste pinning configuration for one domain: the team root's pin plus, ideally,
/// a backup pin, in TrustKit (Swift or Info.plist), Android NSC or OkHttp form.
public struct PinSnippet: Sendable {
    /// The output form.
    public enum Format: String, Sendable, CaseIterable {
        /// Swift: a `TrustKit.initSharedInstance(withConfiguration:)` dictionary.
        case trustKit = "trustkit"
        /// An Info.plist holding `TSKConfiguration`.
        case trustKitPlist = "trustkit-plist"
        /// `res/xml/network_security_config.xml`.
        case nsc
        /// Kotlin `CertificatePinner.Builder()`.
        case okHttp = "okhttp"
        /// A policy file of kind `custom` describing a hand-written pinner (`CustomPinner`).
        case custom
        /// Swift: the `Set<String>` of base64 hashes a hand-written `URLSessionDelegate` holds.
        case swiftPins = "swift-pins"
        /// An Info.plist holding `NSAppTransportSecurity` / `NSPinnedDomains` (iOS 14+).
        case ats

        /// Whether the format is for a hand-written pinner, whose hash form and scope vary.
        public var isHandWritten: Bool { self == .custom || self == .swiftPins }
        /// Whether the format can pin a leaf key (`--leaf-key`): the hand-written ones and ATS.
        public var pinsLeaves: Bool { isHandWritten || self == .ats }

        public static var choices: String { allCases.map(\.rawValue).joined(separator: "|") }
    }

    /// One pin with what it stands for (goes into a comment).
    public struct PinLine: Sendable {
        /// Standard base64 of SHA-256(SPKI).
        public var base64: String
        public var comment: String

        public init(base64: String, comment: String) {
            self.base64 = base64
            self.comment = comment
        }
    }

    public var domain: String
    public var includeSubdomains: Bool
    /// The team root first, then backups.
    public var pins: [PinLine]
    public var reportURIs: [String]
    public var reportOnly: Bool
    /// `yyyy-MM-dd`.
    public var expiration: String?
    /// Hand-written pinners: what the pins are hashes of. Default `spki`.
    public var hash: PinHashForm = .spki
    /// Hand-written pinners: which certificates are hashed. Default `any`.
    public var scope: CustomPinner.Scope = .any

    public init(domain: String, includeSubdomains: Bool = false, pins: [PinLine], reportURIs: [String] = [],
                reportOnly: Bool = false, expiration: String? = nil) {
        (self.domain, self.includeSubdomains, self.pins) = (domain, includeSubdomains, pins)
        (self.reportURIs, self.reportOnly, self.expiration) = (reportURIs, reportOnly, expiration)
    }

    /// Things the user must know about this snippet in `format` (one line each).
    public func warnings(for format: Format) -> [String] {
        var warnings: [String] = []
        if Set(pins.map(\.base64)).count < 2 {
            switch format {
            case .trustKit, .trustKitPlist:
                warnings.append(reportOnly ? "only one pin: TrustKit accepts it because enforcement is off, but add a backup "
                                + "pin (--backup FILE) before you enforce"
                                : "only one pin: TrustKit refuses to start with fewer than two pins when enforcing; "
                                + "add a backup pin with --backup FILE (a CSR, key or certificate of your next root)")
            case .custom, .swiftPins, .ats:
                warnings.append("only one pin: add a backup pin (--backup FILE) so a key rotation does not brick the app")
            case .nsc, .okHttp:
                warnings.append("only one pin: Android and OkHttp strongly advise a backup pin (--backup FILE) so a key "
                                + "rotation does not brick the app")
            }
        }
        if format == .okHttp {
            if reportOnly { warnings.append("OkHttp has no report-only mode; these pins are enforced") }
            if !reportURIs.isEmpty { warnings.append("OkHttp sends no pin-failure reports; --report-uri is ignored") }
            if expiration != nil { warnings.append("OkHttp pins do not expire; --expiration is ignored") }
        }
        if format == .nsc, reportOnly || !reportURIs.isEmpty {
            warnings.append("Android NSC itself enforces and never reports; the <trustkit-config> element is read only by "
                            + "TrustKit-Android")
        }
        return warnings
    }

    /// The snippet text.
    public func render(_ format: Format) -> String {
        switch format {
        case .trustKit: return swift()
        case .trustKitPlist: return plist()
        case .nsc: return nsc()
        case .okHttp: return kotlin()
        case .custom: return customPolicy()
        case .swiftPins: return swiftPins()
        case .ats: return atsPlist()
        }
    }

    private func swift() -> String {
        var entry = ["            kTSKIncludeSubdomains: \(includeSubdomains),",
                     "            kTSKEnforcePinning: \(!reportOnly),"]
        if let expiration { entry.append("            kTSKExpirationDate: \"\(expiration)\",") }
        if !reportURIs.isEmpty {
            entry.append("            kTSKReportUris: [" + reportURIs.map { "\"\($0)\"" }.joined(separator: ", ") + "],")
        }
        entry.append("            kTSKPublicKeyHashes: [")
        entry += pins.map { "                \"\($0.base64)\", // \($0.comment)" }
        entry.append("            ],")
        return (["import TrustKit", "",
                 "// Pins the DevProxy team root for \(domain); call before the first request.",
                 "// kTSKSwizzleNetworkDelegates false: TrustKit checks only the challenges you hand it, in each",
                 "// URLSessionDelegate's urlSession(_:didReceive:completionHandler:):",
                 "//   if !TrustKit.sharedInstance().pinningValidator.handle(challenge, completionHandler: completionHandler) {",
                 "//       completionHandler(.performDefaultHandling, nil)",
                 "//   }",
                 "// (true swizzles every NSURLSession delegate instead, as the Info.plist form sets it).",
                 "let trustKitConfig: [String: Any] = [",
                 "    kTSKSwizzleNetworkDelegates: false,",
                 "    kTSKPinnedDomains: [",
                 "        \"\(domain)\": ["] + entry + ["        ],", "    ],", "]",
                "TrustKit.initSharedInstance(withConfiguration: trustKitConfig)"]).joined(separator: "\n") + "\n"
    }

    private func plist() -> String {
        var entry = ["\t\t\t\t<key>TSKIncludeSubdomains</key>", "\t\t\t\t<\(includeSubdomains)/>",
                     "\t\t\t\t<key>TSKEnforcePinning</key>", "\t\t\t\t<\(!reportOnly)/>"]
        if let expiration { entry += ["\t\t\t\t<key>TSKExpirationDate</key>", "\t\t\t\t<string>\(xml(expiration))</string>"] }
        if !reportURIs.isEmpty {
            entry += ["\t\t\t\t<key>TSKReportUris</key>", "\t\t\t\t<array>"]
            entry += reportURIs.map { "\t\t\t\t\t<string>\(xml($0))</string>" } + ["\t\t\t\t</array>"]
        }
        entry += ["\t\t\t\t<key>TSKPublicKeyHashes</key>", "\t\t\t\t<array>"]
        entry += pins.map { "\t\t\t\t\t<!-- \(comment($0.comment)) -->\n\t\t\t\t\t<string>\($0.base64)</string>" }
        entry.append("\t\t\t\t</array>")
        return ([
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">",
            "<!-- Copy the TSKConfiguration key and its dictionary into your app's Info.plist. -->",
            "<plist version=\"1.0\">", "<dict>", "\t<key>TSKConfiguration</key>", "\t<dict>",
            "\t\t<key>TSKSwizzleNetworkDelegates</key>", "\t\t<true/>",
            "\t\t<key>TSKPinnedDomains</key>", "\t\t<dict>", "\t\t\t<key>\(xml(domain))</key>", "\t\t\t<dict>",
        ] + entry + ["\t\t\t</dict>", "\t\t</dict>", "\t</dict>", "</dict>", "</plist>"]).joined(separator: "\n") + "\n"
    }

    private func nsc() -> String {
        var lines = [
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
            "<!-- res/xml/network_security_config.xml; reference it from the manifest's",
            "     <application android:networkSecurityConfig=\"@xml/network_security_config\">. -->",
            "<network-security-config>", "    <domain-config>",
            "        <domain includeSubdomains=\"\(includeSubdomains)\">\(xml(domain))</domain>",
            "        <trust-anchors>", "            <certificates src=\"system\"/>",
            "            <!-- the DevProxy team root is installed as a user CA -->",
            "            <certificates src=\"user\"/>", "        </trust-anchors>",
            "        <pin-set" + (expiration.map { " expiration=\"\(xml($0))\"" } ?? "") + ">",
        ]
        lines += pins.map { "            <pin digest=\"SHA-256\">\($0.base64)</pin> <!-- \(comment($0.comment)) -->" }
        lines.append("        </pin-set>")
        if reportOnly || !reportURIs.isEmpty {
            lines.append("        <trustkit-config enforcePinning=\"\(!reportOnly)\">")
            lines += reportURIs.map { "            <report-uri>\(xml($0))</report-uri>" }
            lines.append("        </trustkit-config>")
        }
        lines += ["    </domain-config>", "</network-security-config>"]
        return lines.joined(separator: "\n") + "\n"
    }

    private func kotlin() -> String {
        let pattern = includeSubdomains ? "**." + domain : domain
        var lines = ["// OkHttp: pins the DevProxy team root for \(pattern)."]
        if includeSubdomains {
            // OkHttp 3.x reads `**.` as literal text: the pattern matches no host, and pinning is off.
            lines.append("// `**.` (\(domain) and every subdomain) needs OkHttp 4.x; on 3.x it matches nothing: "
                         + "list \(domain) and each subdomain (or *.\(domain), one level) instead.")
        }
        lines.append("val certificatePinner = CertificatePinner.Builder()")
        lines += pins.map { "    .add(\"\(pattern)\", \"sha256/\($0.base64)\") // \($0.comment)" }
        lines += ["    .build()", "val client = OkHttpClient.Builder()", "    .certificatePinner(certificatePinner)", "    .build()"]
        return lines.joined(separator: "\n") + "\n"
    }

    private func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    private func comment(_ text: String) -> String { text.replacingOccurrences(of: "--", with: "- -") }
}
