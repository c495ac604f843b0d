extension HTTP2Field {
    /// Fields that exist only for HTTP/1.1 connections; RFC 9113 §8.2.2 makes them malformed in
    /// HTTP/2 (`te` is allowed with the value `trailers` alone).
    private static let connectionSpecific: Set<[UInt8]> = Set(
        ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"].map { Array($0.utf8) })

    /// This field as it may go on the wire: the name lowercased, then checked.
    ///
    /// - Throws: `HTTP2Error` (`.invalidField`) for an empty name, a name with a byte outside
    ///   visible ASCII or with a colon past the first byte, a value with NUL, CR or LF or with
    ///   whitespace at either end (RFC 9113 §8.2.1), or a connection-specific field (§8.2.2).
    func checkedForSending() throws(HTTP2Error) -> HTTP2Field {
        var field = self
        field.name = name.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        guard let first = field.name.first else { throw HTTP2Error(.invalidField, "empty field name") }
        for (index, byte) in field.name.enumerated() {
            let allowed = byte > 0x20 && byte < 0x7F && (byte != UInt8(ascii: ":") || index == 0)
            guard allowed else { throw HTTP2Error(.invalidField, "field name '\(nameString)' has byte 0x\(hex(byte))") }
        }
        guard first != UInt8(ascii: ":") || field.name.count > 1 else {
            throw HTTP2Error(.invalidField, "pseudo-header field without a name")
        }
        if let bad = value.first(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) {
            throw HTTP2Error(.invalidField, "value of '\(field.nameString)' has byte 0x\(hex(bad))")
        }
        let whitespace: Set<UInt8> = [0x20, 0x09]
        if let edge = [value.first, value.last].compactMap({ $0 }).first(where: whitespace.contains) {
            throw HTTP2Error(.invalidField, "value of '\(field.nameString)' has whitespace (0x\(hex(edge))) at an end")
        }
        if Self.connectionSpecific.contains(field.name) {
            throw HTTP2Error(.invalidField, "'\(field.nameString)' is connection-specific and not allowed in HTTP/2")
        }
        if field.name == Array("te".utf8) && value != Array("trailers".utf8) {
            throw HTTP2Error(.invalidField, "'te' may only be 'trailers' in HTTP/2")
        }
        return field
    }

    private func hex(_ byte: UInt8) -> String {
        byte < 0x10 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
    }
}

extension HTTP2HeaderBlock {
    /// Every field as it may go on the wire, pseudo-header fields first.
    /// - Throws: `HTTP2Error` (`.invalidField`) for a bad field, a regular field among the
    ///   pseudo-header ones or the reverse, or (with `allowPseudo` false, for trailers) any
    ///   pseudo-header field.
    func checkedForSending(allowPseudo: Bool = true) throws(HTTP2Error) -> [HTTP2Field] {
        var result: [HTTP2Field] = []
        result.reserveCapacity(pseudo.count + fields.count)
        for field in pseudo {
            guard allowPseudo else { throw HTTP2Error(.invalidField, "pseudo-header field '\(field.nameString)' in trailers") }
            guard field.isPseudo else { throw HTTP2Error(.invalidField, "'\(field.nameString)' is not a pseudo-header field") }
            result.append(try field.checkedForSending())
        }
        for field in fields {
            guard !field.isPseudo else {
                throw HTTP2Error(.invalidField, "pseudo-header field '\(field.nameString)' after regular fields")
            }
            result.append(try field.checkedForSending())
        }
        return result
    }
}
