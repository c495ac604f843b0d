import Foundation

/// What a pinner hashes, as hand-written pinners compute it. The digest is always SHA-256.
///
/// - `spki`: the DER SubjectPublicKeyInfo (RFC 7469 §2.4; TrustKit, Android NSC, OkHttp, curl's
///   `--pinnedpubkey`, the openssl pipeline `x509 -pubkey | pkey -pubin -outform DER | dgst`).
/// - `rawKey`: the bytes `SecKeyCopyExternalRepresentation` returns, with no SPKI header: PKCS#1
///   RSAPublicKey DER for RSA, `04||X||Y` for EC. A pinner that hashes these bytes
///   ("iOS Network Security Advanced"'s `CertificatePinner`) never equals an SPKI pin.
/// - `trustKit`: a fixed ASN.1 header chosen by key type and size, then the raw key (TrustKit's
///   `TSKSPKIHashCache`; "Certificate pinning en iOS 18 y Android 15"'s `ecP256Header + keyData`).
///   Equal to `spki` for RSA 2048/3072/4096 with e = 65537 and uncompressed P-256/P-384 keys.
/// - `certificate`: the whole DER certificate (its SHA-256 fingerprint); changes at every renewal.
public enum PinHashForm: String, Sendable, CaseIterable, Codable {
    case spki
    case rawKey = "raw-key"
    case trustKit = "trustkit"
    case certificate

    /// The accepted names, for help and error text.
    public static var choices: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The SHA-256 digest of `certificate` in this form, or nil when the form cannot be computed
    /// for its key (an Ed25519 key has no raw-key or TrustKit form).
    public func digest(of certificate: Certificate) -> [UInt8]? {
        switch self {
        case .certificate: return Digest.sha256(certificate.der)
        case .spki, .rawKey, .trustKit: return digest(ofSPKI: certificate.spkiDER)
        }
    }

    /// The SHA-256 digest of a bare key (DER SubjectPublicKeyInfo) in this form; nil for
    /// `certificate`, which needs a certificate, and for key types the form cannot express.
    public func digest(ofSPKI spkiDER: [UInt8]) -> [UInt8]? {
        switch self {
        case .spki: return Digest.sha256(spkiDER)
        case .rawKey: return TrustKitKeyHash.externalRepresentation(ofSPKI: spkiDER).map(Digest.sha256)
        case .trustKit: return TrustKitKeyHash.hash(ofSPKI: spkiDER)
        case .certificate: return nil
        }
    }

    /// The digest of whatever `source` is (a certificate, key or CSR) in this form.
    public func digest(of source: PinSource) -> [UInt8]? {
        if let certificate = source.certificate { return digest(of: certificate) }
        return digest(ofSPKI: source.spkiDER)
    }

    /// The bytes that are hashed, for showing with `--format … --json`; nil as for `digest`.
    public func hashedBytes(of source: PinSource) -> [UInt8]? {
        switch self {
        case .spki: return source.spkiDER
        case .rawKey: return TrustKitKeyHash.externalRepresentation(ofSPKI: source.spkiDER)
        case .trustKit:
            guard let kind = TrustKitKeyHash.supportedKey(ofSPKI: source.spkiDER),
                  let raw = TrustKitKeyHash.externalRepresentation(ofSPKI: source.spkiDER) else { return nil }
            return kind.header + raw
        case .certificate: return source.certificate?.der
        }
    }
}
