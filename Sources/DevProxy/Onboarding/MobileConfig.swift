import CertAuthority

/// An iOS/macOS configuration profile that installs the team root: an unsigned XML property list
/// with one `com.apple.security.root` payload (Apple, Device Management, "CertificateRoot").
///
/// Its UUIDs and identifiers are derived from the root's DER, so the same root always gives the
/// same profile (installing it again replaces it rather than adding a second one) and another
/// root a different one.
public struct MobileConfig: Sendable {
    public let root: Certificate

    public init(root: Certificate) {
        self.root = root
    }

    /// The MIME type Safari hands to the profile installer.
    public static let contentType = "application/x-apple-aspen-config"

    /// `PayloadDisplayName` of the profile, as Settings shows it.
    public var displayName: String { "DevProxy root: \(root.commonName ?? root.subject)" }

    /// The profile's `PayloadIdentifier` (reverse-DNS, unique per root).
    public var identifier: String { "test.devproxy.onboarding." + String(Digest.sha256(root.der).hex.prefix(16)) }

    /// The profile as XML.
    public var xml: String {
        let der = root.der
        let name = escape(root.commonName ?? root.subject)
        let payloadIdentifier = identifier + ".root"
        return """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>PayloadContent</key>
        \t<array>
        \t\t<dict>
        \t\t\t<key>PayloadCertificateFileName</key>
        \t\t\t<string>devproxy-root.crt</string>
        \t\t\t<key>PayloadContent</key>
        \t\t\t<data>
        \(wrapped(der.base64, indent: "\t\t\t"))
        \t\t\t</data>
        \t\t\t<key>PayloadDescription</key>
        \t\t\t<string>Adds the root certificate \(name)</string>
        \t\t\t<key>PayloadDisplayName</key>
        \t\t\t<string>\(name)</string>
        \t\t\t<key>PayloadIdentifier</key>
        \t\t\t<string>\(payloadIdentifier)</string>
        \t\t\t<key>PayloadType</key>
        \t\t\t<string>com.apple.security.root</string>
        \t\t\t<key>PayloadUUID</key>
        \t\t\t<string>\(Self.uuid(label: "payload", der: der))</string>
        \t\t\t<key>PayloadVersion</key>
        \t\t\t<integer>1</integer>
        \t\t</dict>
        \t</array>
        \t<key>PayloadDescription</key>
        \t<string>Trust the DevProxy team root, so apps and browsers accept the certificates DevProxy shows \
        them while it inspects their traffic. SHA-256 \(root.sha256Fingerprint). Remove the profile when you \
        are done debugging.</string>
        \t<key>PayloadDisplayName</key>
        \t<string>\(escape(displayName))</string>
        \t<key>PayloadIdentifier</key>
        \t<string>\(identifier)</string>
        \t<key>PayloadOrganization</key>
        \t<string>DevProxy</string>
        \t<key>PayloadRemovalDisallowed</key>
        \t<false/>
        \t<key>PayloadType</key>
        \t<string>Configuration</string>
        \t<key>PayloadUUID</key>
        \t<string>\(Self.uuid(label: "profile", der: der))</string>
        \t<key>PayloadVersion</key>
        \t<integer>1</integer>
        </dict>
        </plist>

        """
    }

    /// A UUID that depends only on `label` and the root: the first 16 bytes of
    /// SHA-256(label ‖ 0 ‖ DER) with the version and variant bits of RFC 9562 §5.8 (UUIDv8,
    /// "custom"), upper-case as Apple's examples write them.
    static func uuid(label: String, der: [UInt8]) -> String {
        var bytes = Array(Digest.sha256(Array(label.utf8) + [0] + der).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x80
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array(bytes.hex.uppercased())
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }
        return parts.joined(separator: "-")
    }

    /// Base64 in 52-column lines, as property list editors write `<data>`.
    private func wrapped(_ base64: String, indent: String) -> String {
        var lines: [String] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(indent + rest.prefix(52))
            rest = rest.dropFirst(52)
        }
        return lines.joined(separator: "\n")
    }

    private func escape(_ text: String) -> String { MarkupText.escape(text) }
}
