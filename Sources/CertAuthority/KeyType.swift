import CTLS

/// The key algorithms DevProxy issues certificates with.
public enum KeyType: String, CaseIterable, Sendable, Codable {
    case p256 = "ec-p256"
    case p384 = "ec-p384"
    case rsa2048 = "rsa-2048"
    case rsa3072 = "rsa-3072"
    case rsa4096 = "rsa-4096"

    /// Parses the names users type: `p256`, `ec-p256`, `P-256`, `rsa2048`, `rsa-2048`, `RSA:2048`.
    public init?(argument: String) {
        let folded = argument.lowercased().filter { $0.isLetter || $0.isNumber }
        switch folded {
        case "p256", "ecp256", "ec", "ecdsa", "prime256v1", "secp256r1": self = .p256
        case "p384", "ecp384", "secp384r1": self = .p384
        case "rsa2048", "rsa": self = .rsa2048
        case "rsa3072": self = .rsa3072
        case "rsa4096": self = .rsa4096
        default: return nil
        }
    }

    /// The accepted spellings, for help and error text.
    public static var choices: String { allCases.map(\.rawValue).joined(separator: ", ") }

    var curveNID: Int32? {
        switch self {
        case .p256: return NID_X9_62_prime256v1
        case .p384: return NID_secp384r1
        default: return nil
        }
    }

    var rsaBits: Int32? {
        switch self {
        case .rsa2048: return 2048
        case .rsa3072: return 3072
        case .rsa4096: return 4096
        default: return nil
        }
    }
}
