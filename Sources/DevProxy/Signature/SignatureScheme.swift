import CertAuthority
import Foundation

/// How an app signs its requests: which parts of the request go into the HMAC input, in which
/// order, joined by what, with which hash, and in which headers the timestamp, nonce and
/// signature travel.
///
/// The default (`requestSigner`) is the iOS network-security article's `RequestSigner`:
/// HMAC-SHA256 over `METHOD\nPATH\nQUERY\nTIMESTAMP\nNONCE\nBODYHASH`, where PATH is Foundation's
/// `URL.path`, QUERY `URL.query` (or empty), TIMESTAMP whole seconds since 1970, NONCE a UUID and
/// BODYHASH base64(SHA-256(body)); the signature is base64 in `X-Signature`, the timestamp in
/// `X-Timestamp`, the nonce in `X-Nonce`. Other schemes come from a small JSON file
/// (`init(json:source:)`, documented in docs/signatures.md).
public struct SignatureScheme: Sendable, Equatable {
    /// One element of the HMAC input.
    public enum Part: Sendable, Equatable {
        case method, path, query, timestamp, nonce, host
        /// base64(SHA-256(body)).
        case bodySHA256
        /// hex(SHA-256(body)), lower case.
        case bodySHA256Hex
        /// The value of a request header (empty when absent).
        case header(String)

        init?(name: String) {
            switch name {
            case "method": self = .method
            case "path": self = .path
            case "query": self = .query
            case "timestamp": self = .timestamp
            case "nonce": self = .nonce
            case "host": self = .host
            case "body_sha256": self = .bodySHA256
            case "body_sha256_hex": self = .bodySHA256Hex
            default:
                guard name.hasPrefix("header:"), name.count > "header:".count else { return nil }
                self = .header(String(name.dropFirst("header:".count)))
            }
        }
    }

    /// The HMAC's hash function.
    public enum Hash: String, Sendable, CaseIterable {
        case sha256, sha384, sha512, sha1
    }

    /// How the signature is written in its header.
    public enum Encoding: String, Sendable, CaseIterable {
        case base64, hex
    }

    public var signatureHeader = "X-Signature"
    public var timestampHeader = "X-Timestamp"
    public var nonceHeader = "X-Nonce"
    public var parts: [Part] = [.method, .path, .query, .timestamp, .nonce, .bodySHA256]
    public var separator = "\n"
    public var hash = Hash.sha256
    public var encoding = Encoding.base64
    /// A timestamp further than this from the request's arrival is `stale_timestamp`. 5 minutes.
    public var maxSkew: TimeInterval = 300

    /// The article's `RequestSigner`.
    public static let requestSigner = SignatureScheme()

    public init() {}

    /// Reads a scheme from JSON: any of `signature_header`, `timestamp_header`, `nonce_header`,
    /// `parts` (names: `method`, `path`, `query`, `timestamp`, `nonce`, `host`, `body_sha256`,
    /// `body_sha256_hex`, `header:NAME`), `separator`, `hash` (`sha256`, `sha384`, `sha512`,
    /// `sha1`), `encoding` (`base64`, `hex`), `max_skew_seconds`; the rest keeps the defaults.
    ///
    /// - Throws: `ConfigurationError` naming `source` and the key at fault.
    public init(json: [UInt8], source: String) throws {
        let object: [String: Any]
        do {
            object = try JSONDocument.object(json)
        } catch {
            throw ConfigurationError("\(source) is \(error.reason)")
        }
        let known: Set<String> = ["signature_header", "timestamp_header", "nonce_header", "parts", "separator", "hash",
                                  "encoding", "max_skew_seconds"]
        if let unknown = object.keys.filter({ !known.contains($0) && !$0.hasPrefix("_") }).sorted().first {
            throw ConfigurationError("\(source): unknown key \"\(unknown)\" (known: "
                                     + known.sorted().joined(separator: ", ") + ")")
        }
        func string(_ key: String) throws -> String? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String, !text.isEmpty || key == "separator" else {
                throw ConfigurationError("\(source): \"\(key)\" must be a non-empty string")
            }
            return text
        }
        if let value = try string("signature_header") { signatureHeader = value }
        if let value = try string("timestamp_header") { timestampHeader = value }
        if let value = try string("nonce_header") { nonceHeader = value }
        if let value = try string("separator") { separator = value }
        if let value = try string("hash") {
            guard let known = Hash(rawValue: value.lowercased()) else {
                throw ConfigurationError("\(source): unknown hash \"\(value)\" (use "
                                         + Hash.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            hash = known
        }
        if let value = try string("encoding") {
            guard let known = Encoding(rawValue: value.lowercased()) else {
                throw ConfigurationError("\(source): unknown encoding \"\(value)\" (use base64 or hex)")
            }
            encoding = known
        }
        if let value = object["parts"] {
            guard let names = value as? [String], !names.isEmpty else {
                throw ConfigurationError("\(source): \"parts\" must be a non-empty list of names")
            }
            parts = try names.map { name in
                guard let part = Part(name: name) else {
                    throw ConfigurationError("\(source): unknown part \"\(name)\" (use method, path, query, timestamp, "
                                             + "nonce, host, body_sha256, body_sha256_hex or header:NAME)")
                }
                return part
            }
        }
        if let value = object["max_skew_seconds"] {
            guard let seconds = (value as? NSNumber)?.doubleValue, seconds > 0, !(value is Bool) else {
                throw ConfigurationError("\(source): \"max_skew_seconds\" must be a positive number")
            }
            maxSkew = seconds
        }
    }

    /// The headers a request must carry for this scheme: the signature, and the timestamp and
    /// nonce when the input holds them.
    var requiredHeaders: [String] {
        [signatureHeader] + (parts.contains(.timestamp) ? [timestampHeader] : [])
            + (parts.contains(.nonce) ? [nonceHeader] : [])
    }
}
