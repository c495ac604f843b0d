import Foundation

/// One line of the ledger: a root created, an intermediate issued, a revocation, or a step of a
/// root rotation (the next root key made ahead of time, the cross-certificate of the new root).
public struct LedgerRecord: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable {
        case root, intermediate, revocation
        /// `ca init --next`: the next root's key exists; `spki_pin` is the backup pin apps ship.
        case nextRootKey = "next_root_key"
        /// `ca rotate`: the new root's certificate signed by the previous root.
        case crossCertificate = "cross_certificate"
    }

    public var type: Kind
    /// Serial of the certificate the record is about, lower-case hex.
    public var serial: String
    public var email: String?
    public var subject: String?
    public var notBefore: String?
    public var notAfter: String?
    /// SHA-256 of the DER certificate, colon-separated hex.
    public var sha256Fingerprint: String?
    /// `sha256/<base64>` of the certificate's SPKI.
    public var spkiPin: String?
    public var permittedDomains: [String]?
    /// Fingerprint of the certificate that signed this one (the root for intermediates).
    public var issuerFingerprint: String?
    public var keyType: String?
    /// When the record was written (RFC 3339).
    public var issuedAt: String
    /// For revocations: RFC 5280 reason name.
    public var reason: String?
    /// For revocations: when it was recorded (`issued_at`); nil for other records.
    public var revokedAt: Date? { type == .revocation ? ISO8601.date(issuedAt) : nil }
    /// The certificate itself (PEM), so `trace` works even after a bundle has left the machine.
    public var certificate: String?
    /// `certificate` read: nil when absent or not a certificate.
    public var storedCertificate: Certificate? {
        certificate.flatMap { try? Certificate.all(from: Array($0.utf8)).first }
    }
    /// Where the bundle was written.
    public var bundle: String?
    /// SHA-256 (hex) of the previous record's line as written, newline included; of no bytes at
    /// all for a ledger's first record. Set by `Ledger.append`; nil in records written before the
    /// ledger was chained. See `Ledger.verifyChain`.
    public var previousSHA256: String?

    enum CodingKeys: String, CodingKey {
        case type, serial, email, subject
        case notBefore = "not_before"
        case notAfter = "not_after"
        case sha256Fingerprint = "sha256_fingerprint"
        case spkiPin = "spki_pin"
        case permittedDomains = "permitted_domains"
        case issuerFingerprint = "issuer_fingerprint"
        case keyType = "key_type"
        case issuedAt = "issued_at"
        case reason, certificate, bundle
        case previousSHA256 = "previous_sha256"
    }

    /// A record describing `certificate`.
    init(kind: Kind, certificate: Certificate, issuer: Certificate?, keyType: String, bundle: String?, now: Date) {
        self.type = kind
        self.serial = certificate.serialHex
        self.email = certificate.email
        self.subject = certificate.subject
        self.notBefore = ISO8601.string(certificate.notBefore)
        self.notAfter = ISO8601.string(certificate.notAfter)
        self.sha256Fingerprint = certificate.sha256Fingerprint
        self.spkiPin = certificate.pin
        self.permittedDomains = certificate.permittedDNSSubtrees
        self.issuerFingerprint = issuer?.sha256Fingerprint
        self.keyType = keyType
        self.issuedAt = ISO8601.string(now)
        self.certificate = certificate.pem
        self.bundle = bundle
    }

    /// A record of the next root key (no certificate yet), written by `ca init --next`.
    init(nextRootKey key: PrivateKey, keyType: String, now: Date) throws {
        self.type = .nextRootKey
        // No certificate, so no serial yet: the key's pin identifies it.
        self.serial = ""
        self.spkiPin = SPKIPin.sha256(of: try key.publicKeyDER)
        self.keyType = keyType
        self.issuedAt = ISO8601.string(now)
    }

    /// A revocation record.
    init(revoking serial: String, email: String?, reason: RevocationReason, now: Date) {
        self.type = .revocation
        self.serial = serial
        self.email = email
        self.issuedAt = ISO8601.string(now)
        self.reason = reason.rawValue
    }
}

/// RFC 5280 §5.3.1 CRL reason codes, by the names `openssl ca -crl_reason` uses.
public enum RevocationReason: String, CaseIterable, Sendable {
    case unspecified
    case keyCompromise
    case caCompromise = "CACompromise"
    case affiliationChanged
    case superseded
    case cessationOfOperation
    case certificateHold
    case removeFromCRL
    case privilegeWithdrawn
    case aaCompromise = "AACompromise"

    /// Accepts any capitalisation and `-`/`_` separators (`key-compromise`).
    public init?(argument: String) {
        let folded = argument.lowercased().filter { $0.isLetter }
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == folded }) else { return nil }
        self = match
    }

    /// The CRLReason ENUMERATED value.
    var code: Int {
        switch self {
        case .unspecified: return 0
        case .keyCompromise: return 1
        case .caCompromise: return 2
        case .affiliationChanged: return 3
        case .superseded: return 4
        case .cessationOfOperation: return 5
        case .certificateHold: return 6
        case .removeFromCRL: return 8
        case .privilegeWithdrawn: return 9
        case .aaCompromise: return 10
        }
    }
}
