import CertAuthority
import Foundation

extension PinSnippet {
    /// A `custom` policy file for `devproxy policy check` / `pin-check` / `qa`.
    func customPolicy() -> String {
        let hosts = includeSubdomains ? [domain, "*." + domain] : [domain]
        let object: [String: Any] = [
            "kind": "custom", "hash": hash.rawValue, "scope": scope.rawValue, "hosts": hosts,
            "pins": pins.map(\.base64), "enforce": !reportOnly,
            "_pins": pins.map { "\($0.base64): \($0.comment)" },
        ]
        let options: JSONSerialization.WritingOptions = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// An Info.plist with `NSPinnedDomains`: CA identities, or leaf identities for scope `leaf`.
    func atsPlist() -> String {
        let key = scope == .leaf ? "NSPinnedLeafIdentities" : "NSPinnedCAIdentities"
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                     "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">",
                     "<!-- Copy the NSAppTransportSecurity key and its dictionary into your app's Info.plist (iOS 14+). -->",
                     "<plist version=\"1.0\">", "<dict>", "\t<key>NSAppTransportSecurity</key>", "\t<dict>",
                     "\t\t<key>NSPinnedDomains</key>", "\t\t<dict>", "\t\t\t<key>\(xmlText(domain))</key>", "\t\t\t<dict>",
                     "\t\t\t\t<key>NSIncludesSubdomains</key>", "\t\t\t\t<\(includeSubdomains)/>",
                     "\t\t\t\t<key>\(key)</key>", "\t\t\t\t<array>"]
        for pin in pins {
            lines += ["\t\t\t\t\t<!-- \(pin.comment.replacingOccurrences(of: "--", with: "- -")) -->", "\t\t\t\t\t<dict>",
                      "\t\t\t\t\t\t<key>SPKI-SHA256-BASE64</key>", "\t\t\t\t\t\t<string>\(pin.base64)</string>",
                      "\t\t\t\t\t</dict>"]
        }
        lines += ["\t\t\t\t</array>", "\t\t\t</dict>", "\t\t</dict>", "\t</dict>", "</dict>", "</plist>"]
        return lines.joined(separator: "\n") + "\n"
    }

    private func xmlText(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// The pin set of a hand-written Swift pinner, with what each pin is and how it is hashed.
    func swiftPins() -> String {
        let how: String
        switch hash {
        case .spki: how = "SHA-256 of the DER SubjectPublicKeyInfo"
        case .rawKey: how = "SHA-256 of SecKeyCopyExternalRepresentation(SecCertificateCopyKey(certificate))"
        case .trustKit: how = "SHA-256 of the key type's ASN.1 header + SecKeyCopyExternalRepresentation(…)"
        case .certificate: how = "SHA-256 of SecCertificateCopyData(certificate)"
        }
        let which = scope == .leaf ? "the leaf"
            : scope == .ca ? "a CA certificate of the chain" : "any certificate of the chain"
        var lines = ["// \(domain): \(how) of \(which), base64."]
        lines.append("private let pinnedKeyHashes: Set<String> = [")
        lines += pins.map { "    \"\($0.base64)\", // \($0.comment)" }
        lines.append("]")
        return lines.joined(separator: "\n") + "\n"
    }
}
