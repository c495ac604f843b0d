import Foundation

/// A pin-validation failure report found in a request body: TrustKit's shape or RFC 7469's.
public enum PinFailureReport: Sendable, Equatable {
    case trustKit(TrustKitReport)
    case rfc7469(RFC7469Report)

    /// Recognises a report body; nil when the JSON is neither shape.
    ///
    /// TrustKit reports carry `app-bundle-id` and `validation-result`; RFC 7469 reports carry
    /// `known-pins` and `served-certificate-chain` but no app fields.
    public static func parse(_ body: Data) -> PinFailureReport? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        let decoder = JSONDecoder()
        if object["app-bundle-id"] != nil, object["validation-result"] != nil {
            return (try? decoder.decode(TrustKitReport.self, from: body)).map(PinFailureReport.trustKit)
        }
        if object["known-pins"] != nil, object["hostname"] != nil {
            return (try? decoder.decode(RFC7469Report.self, from: body)).map(PinFailureReport.rfc7469)
        }
        return nil
    }
}

/// The HPKP violation report of RFC 7469 §3.
public struct RFC7469Report: Codable, Sendable, Equatable {
    public var dateTime: String?
    public var hostname: String
    public var port: Int?
    public var effectiveExpirationDate: String?
    public var includeSubdomains: Bool?
    public var notedHostname: String?
    public var servedCertificateChain: [String]?
    public var validatedCertificateChain: [String]?
    public var knownPins: [String]

    private enum CodingKeys: String, CodingKey {
        case dateTime = "date-time", hostname, port, effectiveExpirationDate = "effective-expiration-date"
        case includeSubdomains = "include-subdomains", notedHostname = "noted-hostname"
        case servedCertificateChain = "served-certificate-chain"
        case validatedCertificateChain = "validated-certificate-chain", knownPins = "known-pins"
    }
}
