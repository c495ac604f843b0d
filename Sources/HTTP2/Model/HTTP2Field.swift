#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes

/// One header field of an HTTP/2 header block, as bytes (HTTP/2 carries octets, not text).
///
/// Received fields are exactly what the peer sent (nghttp2 has checked them: lowercase names, no
/// CR/LF/NUL). Fields given to a `submit…` call are checked again before anything is queued;
/// names are lowercased there (RFC 9113 §8.2.1: "field names MUST be converted to lowercase").
public struct HTTP2Field: Hashable, Sendable, CustomStringConvertible {
    /// The name, e.g. `content-type` or `:path`.
    public var name: [UInt8]
    /// The value, without leading or trailing whitespace.
    public var value: [UInt8]
    /// Whether the value must never enter an HPACK table (HPACK §6.2.3), as for credentials.
    /// Kept from received fields so a relay forwards them with the same protection.
    public var neverIndex: Bool

    /// A field from bytes.
    public init(name: [UInt8], value: [UInt8], neverIndex: Bool = false) {
        self.name = name
        self.value = value
        self.neverIndex = neverIndex
    }

    /// A field from text (UTF-8; a value's bytes that are not UTF-8, `ObsText`, as they came).
    public init(_ name: String, _ value: String, neverIndex: Bool = false) {
        self.init(name: Array(name.utf8), value: ObsText.wireBytes(value) ?? Array(value.utf8), neverIndex: neverIndex)
    }

    /// The name as text (invalid UTF-8 repaired).
    public var nameString: String { String(decoding: name, as: UTF8.self) }
    /// The value as text: UTF-8, or bytes that are not UTF-8 kept as `ObsText` (they were
    /// repaired to U+FFFD, and an HTTP/1.1 hop got other bytes than the ones sent).
    public var valueString: String { ObsText.string(value) }
    /// Whether this is a pseudo-header field (`:method`, `:status`, …).
    public var isPseudo: Bool { name.first == UInt8(ascii: ":") }

    /// Whether the name is exactly `wanted`'s bytes (a length check, then one `memcmp`, rather
    /// than comparing element by element through a generic sequence).
    public func hasName(_ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        name.count == wanted.count && name.withUnsafeBufferPointer { mine in
            mine.isEmpty || memcmp(mine.baseAddress!, wanted.baseAddress!, mine.count) == 0
        }
    }

    /// The size HPACK and SETTINGS_MAX_HEADER_LIST_SIZE count: name + value + 32 (RFC 9113 §6.5.2).
    public var listSize: Int { name.count + value.count + 32 }

    public var description: String { "\(nameString): \(valueString)" }
}
