import Foundation
import HTTP1
import HTTPTypes

/// A held body as a person edits it, as mitmproxy's `message.text` is: decoded of its content
/// codings (`Content-Encoding: gzip`, `br`, `zstd`, `deflate`, or a list of them) and read in its
/// declared charset, then, once edited, written back in that charset and coded again with the same
/// codings in the same order. A body that goes on unedited goes byte for byte as it came; one that
/// does not decode (corrupt, cut short, an unknown coding) is not offered as text, and `note` says why.
extension Intercepts {
    public struct ShownBody: Sendable, Equatable {
        /// The content codings in the order they were applied, as `Content-Encoding` names them
        /// (lower case, `identity` left out); empty for none.
        public var codings: [String] = []
        /// The declared charset the text was read in, when not UTF-8 (`shift_jis`).
        public var charset: String?
        /// The body decoded and read as text; nil when it is not offered so (`note` says why), or
        /// when it needs neither (no coding, UTF-8: the body is its own text).
        public var text: String?
        /// The decoded body's size in bytes, with `text`.
        public var decodedSize: Int?
        /// What the editor says beside `text`: `gzip: shown decoded, sent re-encoded as gzip`.
        public var summary: String?
        /// Why a coded body is sent unchanged: one line.
        public var note: String?

        /// How `body`, under `headers`, is shown.
        public init(headers: [HeaderField], body: [UInt8]) {
            let contentEncoding = Intercepts.contentEncoding(headers)
            let contentType = headers.last { $0.name.equalsCaseInsensitive("Content-Type") }?.value
            codings = contentEncoding.map { value in
                value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                    .filter { !$0.isEmpty && $0 != "identity" }
            } ?? []
            let listed = codings.joined(separator: ", ")
            var decoded = body
            if !codings.isEmpty {
                let unknown = ContentCoding.unknownNames(inHeader: contentEncoding ?? "")
                guard unknown.isEmpty, let parsed = ContentCoding.list(fromHeader: contentEncoding) else {
                    note = "\(unknown.joined(separator: ", ")): a content coding DevProxy cannot undo, so the body is "
                        + "sent unchanged"
                    return
                }
                for coding in parsed.reversed() where !decoded.isEmpty {
                    // One byte past the limit tells a body over it from one exactly at it.
                    guard let output = ContentDecoder.decode(decoded, coding: coding,
                                                             outputLimit: Intercepts.maxBody + 1),
                          output.end == .complete || output.end == .outputLimit else {
                        note = "the body does not decode as \(coding.rawValue) (corrupt or cut short): sent unchanged"
                        return
                    }
                    guard output.end == .complete, output.bytes.count <= Intercepts.maxBody else {
                        note = "decoded from \(listed), the body is over \(Intercepts.maxBody >> 20) MiB, more than a "
                            + "breakpoint shows: sent unchanged"
                        return
                    }
                    decoded = output.bytes
                }
            }
            let reading = BodyText.reading(decoded, isPrefix: false, contentType: contentType)
            guard let read = reading?.text else {
                if !codings.isEmpty { note = "decoded from \(listed), the body is not text: sent unchanged" }
                return
            }
            guard !codings.isEmpty || reading?.charset != nil else { return }
            text = read
            decodedSize = decoded.count
            charset = reading?.charset
            let parts = [codings.isEmpty ? nil : "\(listed): shown decoded, sent re-encoded as \(listed)",
                         charset.map { "\($0) text: shown as Unicode, sent in \($0)" }]
            summary = parts.compactMap { $0 }.joined(separator: "; ")
        }
    }

    /// Every `Content-Encoding` field of `headers` as one value (`gzip, br`); nil without one.
    static func contentEncoding(_ headers: [HeaderField]) -> String? {
        let values = headers.filter { $0.name.equalsCaseInsensitive("Content-Encoding") }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// `text`, an edit of a `ShownBody`'s text, as the bytes that go on under `headers` (the held
    /// ones, or as edited): written in the charset their `Content-Type` declares, then coded with
    /// every coding their `Content-Encoding` names, in order. Throws the reason, one line, when the
    /// charset cannot write a character of it or a coding is one DevProxy cannot write.
    public static func encodeShown(_ text: String, headers: [HeaderField]) throws(ConfigurationError) -> [UInt8] {
        var bytes = Array(text.utf8)
        let contentType = headers.last { $0.name.equalsCaseInsensitive("Content-Type") }?.value
        if let charset = BodyCharset(contentType: contentType),
           !charset.isASCIICompatible || bytes.contains(where: { $0 >= 0x80 }) {
            guard let written = charset.bytes(of: text) else {
                throw ConfigurationError("body_decoded: the text has characters \(charset.name) cannot write (the "
                                         + "Content-Type says charset=\(charset.name)); change the charset, or send "
                                         + "body_base64")
            }
            bytes = written
        }
        guard let coding = contentEncoding(headers), ContentCoding.list(fromHeader: coding)?.isEmpty != true else {
            return bytes
        }
        guard let coded = ContentEncoder.encode(bytes, contentEncoding: coding) else {
            throw ConfigurationError("body_decoded: Content-Encoding says \(coding), which DevProxy cannot write (it "
                                     + "writes gzip, deflate, br and zstd); remove the header, or send body_base64")
        }
        return coded
    }
}

extension Intercepts.Held {
    /// The held body as the editor shows it (`Intercepts.ShownBody`).
    public var shownBody: Intercepts.ShownBody { Intercepts.ShownBody(headers: headers, body: body) }
}
