import Foundation

/// One `-----BEGIN LABEL-----` … `-----END LABEL-----` block (RFC 7468).
public struct PEMBlock: Sendable {
    public let label: String
    /// The base64 body without line breaks.
    public let body: String

    public init(label: String, der: [UInt8]) {
        self.label = label
        self.body = Data(der).base64EncodedString()
    }

    init(label: String, body: String) {
        self.label = label
        self.body = body
    }

    /// The decoded body, or nil when it is not valid base64.
    public var der: [UInt8]? { Data(base64Encoded: body).map { [UInt8]($0) } }

    /// The block as text: 64-column lines, each ending in `\n`.
    public var text: String {
        var lines = ["-----BEGIN \(label)-----"]
        lines += body.chunked(64)
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every complete block in `text`, in order. Text between blocks is ignored; a BEGIN
    /// without its END yields a block whose body is empty so the caller can report it.
    public static func all(in text: String) -> [PEMBlock] {
        var blocks: [PEMBlock] = []
        var label: String?
        var body = ""
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                if let open = label { blocks.append(PEMBlock(label: open, body: "!")) }
                label = String(line.dropFirst(11).dropLast(5))
                body = ""
            } else if line.hasPrefix("-----END "), line.hasSuffix("-----") {
                if let open = label { blocks.append(PEMBlock(label: open, body: body)) }
                label = nil
            } else if label != nil, !line.contains(":") {
                body += line
            }
        }
        if let open = label { blocks.append(PEMBlock(label: open, body: "!")) }
        return blocks
    }
}
