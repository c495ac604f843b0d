import Foundation

/// A remote pin set: the `/.well-known/pins.json` an app fetches to refresh its pins, as the
/// "iOS Network Security Advanced" article's `PinRotationManager` reads it: `hashes` (primary
/// and backup pins, bare base64), `expiresAt` (a `Date`) and `minAppVersion` (a string).
///
/// The article decodes it with a plain `JSONDecoder()`, whose default date strategy
/// (`.deferredToDate`) reads a `Date` as a number of seconds since 2001-01-01 00:00:00 UTC.
/// An ISO 8601 string or Unix seconds therefore fail to decode (or decode ~31 years off), and the
/// app silently keeps its bundled pins. `DateFormat` names the three encodings.
public struct RemotePinSet: Sendable, Equatable {
    /// How `expiresAt` is written.
    public enum DateFormat: String, Sendable, CaseIterable {
        /// Seconds since 2001-01-01T00:00:00Z, a JSON number: what `JSONDecoder()` reads by default.
        case reference
        /// An RFC 3339 string: needs `decoder.dateDecodingStrategy = .iso8601`.
        case iso8601
        /// Seconds since 1970-01-01T00:00:00Z: needs `.secondsSince1970`.
        case unix

        public static var choices: String { allCases.map(\.rawValue).joined(separator: "|") }

        var encoding: JSONEncoder.DateEncodingStrategy {
            switch self {
            case .reference: return .deferredToDate
            case .iso8601: return .iso8601
            case .unix: return .secondsSince1970
            }
        }

        var decoding: JSONDecoder.DateDecodingStrategy {
            switch self {
            case .reference: return .deferredToDate
            case .iso8601: return .iso8601
            case .unix: return .secondsSince1970
            }
        }
    }

    public var hashes: [String]
    public var expiresAt: Date
    public var minAppVersion: String

    public init(hashes: [String], expiresAt: Date, minAppVersion: String) {
        self.hashes = hashes
        self.expiresAt = expiresAt
        self.minAppVersion = minAppVersion
    }

    /// The article's `PinConfig`, field for field.
    private struct Document: Codable {
        let hashes: [String]
        let expiresAt: Date
        let minAppVersion: String
    }

    /// The file's bytes: sorted keys, indented, slashes unescaped (base64 holds `/`).
    public func json(dateFormat: DateFormat) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = dateFormat.encoding
        let document = Document(hashes: hashes, expiresAt: expiresAt, minAppVersion: minAppVersion)
        return Array(try encoder.encode(document)) + [0x0A]
    }

    /// Decodes a pin set as an app with `dateFormat`'s decoder would.
    ///
    /// - Throws: `PolicyError` `.unreadable` when it is not JSON or lacks a field, `.invalidValue`
    ///   when `expiresAt` is not in that format, `.invalidPin` for a hash that is not 32 bytes of
    ///   base64 (bare or `sha256/`).
    public static func decode(_ bytes: [UInt8], dateFormat: DateFormat) throws -> RemotePinSet {
        guard (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any] else {
            throw PolicyError(.unreadable, "the pin set is not a JSON object")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = dateFormat.decoding
        let document: Document
        do {
            document = try decoder.decode(Document.self, from: Data(bytes))
        } catch DecodingError.keyNotFound(let key, _) {
            throw PolicyError(.unreadable, "the pin set has no \"\(key.stringValue)\"")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.dataCorrupted(let context) {
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            if field == "expiresAt" {
                throw PolicyError(.invalidValue, "expiresAt is not a \(dateFormat.rawValue) date (\(dateFormat.help)); "
                                  + "an app decoding it that way drops the whole pin set")
            }
            throw PolicyError(.invalidValue, "\(field.isEmpty ? "the pin set" : field) has the wrong type")
        } catch {
            throw PolicyError(.unreadable, "the pin set does not decode: \(error)")
        }
        for hash in document.hashes
        where Data(base64Encoded: hash.hasPrefix("sha256/") ? String(hash.dropFirst(7)) : hash)?.count != 32 {
            throw PolicyError(.invalidPin, "hash \(hash) is not 32 bytes of base64")
        }
        return RemotePinSet(hashes: document.hashes, expiresAt: document.expiresAt,
                            minAppVersion: document.minAppVersion)
    }

    /// What a pin-set rewrite did.
    public struct Rewrite: Sendable, Equatable {
        public var body: [UInt8]
        /// Pins added (those already present are not repeated).
        public var added: [String]
    }

    /// Adds `pins` (bare base64) to a pin set's `hashes`, keeping every other field as it was.
    /// Pins are written in the style the set already uses (`sha256/…` or bare).
    ///
    /// - Throws: `PolicyError` `.unreadable` when the body is not a JSON object with a `hashes`
    ///   array of strings.
    public static func addingPins(_ pins: [String], to body: [UInt8]) throws -> Rewrite {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else {
            throw PolicyError(.unreadable, "the response is not a JSON object")
        }
        guard let hashes = object["hashes"] as? [String] else {
            throw PolicyError(.unreadable, "the response has no \"hashes\" array of strings")
        }
        let prefixed = !hashes.isEmpty && hashes.allSatisfy { $0.hasPrefix("sha256/") }
        let added = pins.map { prefixed ? "sha256/" + $0 : $0 }.filter { !hashes.contains($0) }
        object["hashes"] = hashes + added
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return Rewrite(body: Array(data), added: added)
    }
}

extension RemotePinSet.DateFormat {
    /// How an app's decoder must be set up for this format.
    var help: String {
        switch self {
        case .reference: return "a number of seconds since 2001-01-01, JSONDecoder's default"
        case .iso8601: return "an RFC 3339 string, JSONDecoder with .iso8601"
        case .unix: return "a number of seconds since 1970-01-01, JSONDecoder with .secondsSince1970"
        }
    }
}
