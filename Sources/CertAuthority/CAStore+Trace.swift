import Foundation

/// What `trace` found out about one certificate.
public struct TraceFinding: Sendable {
    public enum Relation: String, Sendable {
        /// The certificate is one of our intermediates.
        case isIntermediate = "is_intermediate"
        /// One of our intermediates signed it.
        case issuedByIntermediate = "issued_by_intermediate"
        /// The certificate is our root, the current one or one retired by `ca rotate`.
        case isRoot = "is_root"
        /// Our root signed it directly (a leaf from a team that signs with the root).
        case issuedByRoot = "issued_by_root"
        /// A rotation's cross-certificate: a newer root of ours signed by an older one.
        case isCrossCertificate = "is_cross_certificate"
        /// A CA certificate our root signed that the ledger does not hold: issuance nobody
        /// recorded, or a ledger line lost. Never "team-shared signing": it can sign for anyone.
        case unrecordedCA = "unrecorded_ca"
    }

    public let certificate: Certificate
    public let relation: Relation
    /// The intermediate concerned, for the two intermediate relations.
    public let intermediate: IntermediateEntry?
    /// The root concerned, for the root relations (the issuer, for a cross-certificate).
    public var root: Certificate? = nil
}

extension CAStore {
    /// Traces certificates back to the engineer whose intermediate issued them.
    ///
    /// - Parameter input: PEM or DER certificate(s), or a TrustKit pin-failure report (JSON
    ///   with `validated-certificate-chain`).
    /// - Returns: one finding per input certificate this CA knows; empty when none.
    public func trace(_ input: [UInt8], now: Date = Date()) throws -> [TraceFinding] {
        let certificates = try Self.certificates(inTraceInput: input)
        // Every root this CA has had: chains minted before and after a rotation both trace.
        let roots = try allRoots()
        let crosses = try ledgerCrossCertificates()
        let known = try intermediates(now: now).entries
        let loaded = known.compactMap { entry in entry.certificate.map { (entry, $0) } }
        var findings: [TraceFinding] = []
        for certificate in certificates {
            if let root = roots.first(where: { $0 == certificate }) {
                findings.append(TraceFinding(certificate: certificate, relation: .isRoot, intermediate: nil,
                                             root: root))
            } else if crosses.contains(certificate) {
                findings.append(TraceFinding(certificate: certificate, relation: .isCrossCertificate, intermediate: nil,
                                             root: roots.first { certificate.isIssued(by: $0) }))
            } else if let match = loaded.first(where: { $0.1 == certificate }) {
                findings.append(TraceFinding(certificate: certificate, relation: .isIntermediate, intermediate: match.0))
            } else if let match = loaded.first(where: { certificate.isIssued(by: $0.1) }) {
                findings.append(TraceFinding(certificate: certificate, relation: .issuedByIntermediate, intermediate: match.0))
            } else if let root = roots.first(where: { certificate.isIssued(by: $0) }) {
                findings.append(TraceFinding(certificate: certificate, relation: certificate.isCA ? .unrecordedCA : .issuedByRoot,
                                             intermediate: nil, root: root))
            }
        }
        return findings
    }

    /// The certificates in a trace input.
    ///
    /// - Throws: `.corruptCertificate` when the input holds none.
    public static func certificates(inTraceInput input: [UInt8]) throws -> [Certificate] {
        let trimmed = input.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\t") }
        if trimmed.first == UInt8(ascii: "{") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(trimmed)) as? [String: Any],
                  let chain = object["validated-certificate-chain"] as? [String] else {
                throw CAError(.corruptCertificate, "the JSON is not a TrustKit pin-failure report (no \"validated-certificate-chain\" list)")
            }
            return try chain.flatMap { try Certificate.all(from: Array($0.utf8)) }
        }
        return try Certificate.all(from: input)
    }
}
