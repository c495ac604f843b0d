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
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]))
            ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
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
        let which = scope == .leaf ? "the leaf" : scope == .ca ? "a CA certificate of the chain" : "any certificate of the chain"
        var lines = ["// \(domain): \(how) of \(which), base64."]
        lines.append("private let pinnedKeyHashes: Set<String> = [")
        lines += pins.map { "    \"\($0.base64)\", // \($0.comment)" }
        lines.append("]")
        return lines.joined(separator: "\n") + "\n"
    }
}
