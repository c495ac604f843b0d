import Foundation
import HTTPTypes
import GRPCWire

/// The fields of a form a request posts: `application/x-www-form-urlencoded` (the WHATWG URL
/// Standard's parser: `&`-separated pairs, `+` for space, percent-escapes, an invalid escape kept
/// as it is) or `multipart/form-data` (RFC 7578: a `Content-Disposition: form-data; name=…` part
/// per field, files with `filename`). Read from a body's first bytes, so a large upload still
/// lists the fields it begins with; the form says whether it saw the whole body.
///
/// The web UI's form view (`GET /api/flows/ID/request/form`) and HAR's `postData.params` read it,
/// as mitmproxy's, Charles's and Proxyman's form views show what a raw view buries (a multipart
/// body is boundaries, part headers and bytes; a URL-encoded one is escapes).
public struct FormBody: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case urlEncoded = "application/x-www-form-urlencoded"
        case multipart = "multipart/form-data"
    }

    public struct Field: Sendable, Equatable {
        public var name: String
        /// The value as text: a URL-encoded value, or a part without a file name whose bytes are
        /// UTF-8 (at most `valueLimit` bytes of it; `valueCut` says when there were more). Nil for
        /// a file, or a part that is not text.
        public var value: String?
        /// A file part's `filename` (RFC 7578 §4.2; `filename*` when it has one).
        public var fileName: String?
        /// A part's own `Content-Type`.
        public var contentType: String?
        /// The value's or part's bytes (of what was read: see `isCut`).
        public var size: Int
        /// The value was longer than `valueLimit`.
        public var valueCut: Bool = false
        /// The part runs past the bytes read (the body was cut before its end).
        public var isCut: Bool = false

        public init(name: String, value: String? = nil, fileName: String? = nil, contentType: String? = nil, size: Int,
                    valueCut: Bool = false, isCut: Bool = false) {
            self.name = name
            self.value = value
            self.fileName = fileName
            self.contentType = contentType
            self.size = size
            self.valueCut = valueCut
            self.isCut = isCut
        }
    }

    public var kind: Kind
    public var fields: [Field]
    /// Every field was read to its end (the body was read whole; a multipart body reached its
    /// closing delimiter).
    public var isComplete: Bool

    /// Longest value kept as text; longer ones are cut there (`valueCut`).
    public static let valueLimit = 64 * 1024
    /// Most fields read; a body with more is not complete.
    public static let fieldLimit = 10_000
    /// Longest header section of one part.
    static let partHeadLimit = 16 * 1024

    /// The form in `body`, or nil when `contentType` is not a form type or, for multipart, names no
    /// boundary or the body does not start with one.
    /// - Parameters:
    ///   - body: the body's bytes after content decoding (its first bytes, when `whole` is false).
    ///   - whole: whether `body` is the whole body.
    public static func parse(contentType: String?, body: [UInt8], whole: Bool) -> FormBody? {
        guard let contentType else { return nil }
        let (type, parameters) = MediaType.parse(contentType)
        switch type {
        case Kind.urlEncoded.rawValue:
            return urlEncoded(body, whole: whole)
        case Kind.multipart.rawValue:
            guard let boundary = parameters["boundary"], !boundary.isEmpty, boundary.utf8.count <= 200 else { return nil }
            return multipart(body, boundary: Array(boundary.utf8))
        default:
            return nil
        }
    }

    /// Whether a body of this `Content-Type` is a form `parse` reads.
    public static func isForm(contentType: String?) -> Bool {
        guard let contentType else { return false }
        let type = MediaType.parse(contentType).type
        return type == Kind.urlEncoded.rawValue || type == Kind.multipart.rawValue
    }

    // MARK: - application/x-www-form-urlencoded

    private static func urlEncoded(_ body: [UInt8], whole: Bool) -> FormBody {
        var fields: [Field] = []
        var complete = whole
        let pairs = body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true)
        for (index, pair) in pairs.enumerated() {
            guard fields.count < fieldLimit else {
                complete = false
                break
            }
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = PercentDecoding.lenient(pair[pair.startIndex..<(equals ?? pair.endIndex)], plusIsSpace: true)
            let rawValue = equals.map { pair[pair.index(after: $0)...] } ?? []
            let value = PercentDecoding.lenient(rawValue, plusIsSpace: true)
            // The last pair of a cut body may be cut itself.
            let cut = !whole && index == pairs.count - 1
            var field = Field(name: String(decoding: name, as: UTF8.self), size: value.count, isCut: cut)
            field.valueCut = value.count > valueLimit
            field.value = String(decoding: value.prefix(valueLimit), as: UTF8.self)
            fields.append(field)
        }
        return FormBody(kind: .urlEncoded, fields: fields, isComplete: complete)
    }

    // MARK: - multipart/form-data

    private static func multipart(_ body: [UInt8], boundary: [UInt8]) -> FormBody? {
        // RFC 2046 §5.1.1: the first delimiter may have a preamble before it; every later one
        // is CRLF "--" boundary, followed by "--" for the last, or by optional whitespace and CRLF.
        let dashBoundary = Array("--".utf8) + boundary
        let delimiter = Array("\r\n".utf8) + dashBoundary
        let start: Int
        if body.starts(with: dashBoundary) {
            start = dashBoundary.count
        } else if let found = find(delimiter, in: body, from: 0) {
            start = found + delimiter.count
        } else {
            return nil
        }
        var fields: [Field] = []
        var position = start
        var complete = false
        while fields.count < fieldLimit {
            // After a delimiter: "--" ends the body; otherwise whitespace, CRLF, then a part.
            if body.count - position >= 2, body[position] == UInt8(ascii: "-"), body[position + 1] == UInt8(ascii: "-") {
                complete = true
                break
            }
            while position < body.count, body[position] == UInt8(ascii: " ") || body[position] == UInt8(ascii: "\t") {
                position += 1
            }
            guard body.count - position >= 2, body[position] == 0x0D, body[position + 1] == 0x0A else { break }
            position += 2
            let headEnd = find(Array("\r\n\r\n".utf8), in: body, from: position, limit: partHeadLimit)
            // A part with no header section ends its (empty) head with the first CRLF.
            let emptyHead = body.count - position >= 2 && body[position] == 0x0D && body[position + 1] == 0x0A
            guard emptyHead || headEnd != nil else { break }
            let head = emptyHead ? [] : Array(body[position..<headEnd!])
            let contentStart = emptyHead ? position + 2 : headEnd! + 4
            let end = find(delimiter, in: body, from: contentStart)
            let content = body[contentStart..<(end ?? body.count)]
            var field = part(head: head, content: content)
            field.isCut = end == nil
            fields.append(field)
            guard let end else { break }
            position = end + delimiter.count
        }
        // The closing delimiter ends the form, whether or not bytes (an epilogue) were cut after it.
        return FormBody(kind: .multipart, fields: fields, isComplete: complete)
    }

    /// One part's field from its header section and content.
    private static func part(head: [UInt8], content: ArraySlice<UInt8>) -> Field {
        var name = ""
        var fileName: String?
        var contentType: String?
        for line in String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let fieldName = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            if fieldName == "content-disposition" {
                let parameters = MediaType.parse(value).parameters
                name = parameters["name"] ?? ""
                fileName = parameters["filename*"].flatMap(extendedValue) ?? parameters["filename"]
            } else if fieldName == "content-type" {
                contentType = value
            }
        }
        var field = Field(name: name, fileName: fileName, contentType: contentType, size: content.count)
        let isText = contentType.map { MediaType.parse($0).type.hasPrefix("text/") } ?? true
        if fileName == nil, isText {
            let kept = content.prefix(valueLimit)
            if let text = String(validating: kept, as: UTF8.self), !kept.contains(0) {
                field.value = text
                field.valueCut = content.count > valueLimit
            }
        }
        return field
    }

    /// An RFC 8187 value (`UTF-8''%E2%82%AC.txt`), decoded; nil when it is not one.
    static func extendedValue(_ text: String) -> String? {
        let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard pieces.count == 3, pieces[0].lowercased() == "utf-8" else { return nil }
        return String(validating: PercentDecoding.lenient(pieces[2].utf8), as: UTF8.self)
    }

    /// The first index of `needle` in `haystack` at or after `from` (and, with `limit`, starting
    /// within `limit` bytes of it).
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int, limit: Int = .max) -> Int? {
        guard let first = needle.first, haystack.count - from >= needle.count else { return nil }
        let last = min(haystack.count - needle.count, from + min(limit, haystack.count))
        var index = from
        while index <= last {
            guard let candidate = haystack[index...last].firstIndex(of: first) else { return nil }
            if haystack[candidate..<(candidate + needle.count)].elementsEqual(needle) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}
