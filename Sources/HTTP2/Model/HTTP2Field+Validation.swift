extension HTTP2Field {
    /// This field as it may go on the wire: the name lowercased, then checked.
    ///
    /// - Throws: `HTTP2Error` (`.invalidField`) for an empty name, a name with a byte outside
    ///   visible ASCII or with a colon past the first byte, a value with NUL, CR or LF or with
    ///   whitespace at either end (RFC 9113 §8.2.1), or a connection-specific field (§8.2.2).
    func checkedForSending() throws(HTTP2Error) -> HTTP2Field {
        var field = self
        if hasUppercaseName { field.name = name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } }
        try field.checkLowercased()
        return field
    }

    /// Whether the name has an ASCII uppercase letter (received h2 names never do).
    var hasUppercaseName: Bool {
        name.contains { $0 >= 0x41 && $0 <= 0x5A }
    }

    /// The checks of `checkedForSending` on a field whose name is lowercase already.
    func checkLowercased() throws(HTTP2Error) {
        // Every field of every relayed head passes here: byte loops, nothing copied.
        let field = self
        guard let first = field.name.first else { throw HTTP2Error(.invalidField, "empty field name") }
        var index = 0
        for byte in field.name {
            let allowed = byte > 0x20 && byte < 0x7F && (byte != UInt8(ascii: ":") || index == 0)
            guard allowed else { throw HTTP2Error(.invalidField, "field name '\(nameString)' has byte 0x\(hex(byte))") }
            index += 1
        }
        guard first != UInt8(ascii: ":") || field.name.count > 1 else {
            throw HTTP2Error(.invalidField, "pseudo-header field without a name")
        }
        for byte in value where byte == 0 || byte == 0x0A || byte == 0x0D {
            throw HTTP2Error(.invalidField, "value of '\(field.nameString)' has byte 0x\(hex(byte))")
        }
        let blank = { (byte: UInt8?) in byte == 0x20 || byte == 0x09 }
        if let edge = blank(value.first) ? value.first : blank(value.last) ? value.last : nil {
            throw HTTP2Error(.invalidField, "value of '\(field.nameString)' has whitespace (0x\(hex(edge))) at an end")
        }
        if field.isConnectionSpecific {
            throw HTTP2Error(.invalidField, "'\(field.nameString)' is connection-specific and not allowed in HTTP/2")
        }
        if field.hasName("te") && !value.elementsEqual("trailers".utf8) {
            throw HTTP2Error(.invalidField, "'te' may only be 'trailers' in HTTP/2")
        }
    }

    /// Fields that exist only for HTTP/1.1 connections; RFC 9113 §8.2.2 makes them malformed in
    /// HTTP/2 (`te` is allowed with the value `trailers` alone). `name` must be lowercase.
    private var isConnectionSpecific: Bool {
        switch name.count {
        case 7: return hasName("upgrade")
        case 10: return hasName("connection") || hasName("keep-alive")
        case 16: return hasName("proxy-connection")
        case 17: return hasName("transfer-encoding")
        default: return false
        }
    }

    /// Whether the name is exactly `lowercase` (bytes compared, no copies).
    public func hasName(_ lowercase: StaticString) -> Bool {
        lowercase.withUTF8Buffer { name.elementsEqual($0) }
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
        let block = try checkedBlockForSending(allowPseudo: allowPseudo)
        return block.pseudo + block.fields
    }

    /// `checkedForSending` as a block: this one when every name is lowercase already (as a
    /// relayed h2 head's are), so nothing is copied; the fields are checked where they are.
    func checkedBlockForSending(allowPseudo: Bool = true) throws(HTTP2Error) -> HTTP2HeaderBlock {
        // Through buffer pointers: subscripting the arrays copies each field out.
        // Both parts are checked whatever the first says (its lowercasing decides nothing yet).
        let pseudoLowercased = pseudoChecked && allowPseudo ? false : try pseudo.withUnsafeBufferPointer {
            Self.check($0, asPseudo: true, allowPseudo: allowPseudo)
        }.get()
        let fieldsLowercased = fieldsChecked ? false : try fields.withUnsafeBufferPointer {
            Self.check($0, asPseudo: false, allowPseudo: allowPseudo)
        }.get()
        let lowercased = pseudoLowercased || fieldsLowercased
        guard lowercased else { return self }
        var result = HTTP2HeaderBlock(pseudo: [], fields: [])
        result.pseudo.reserveCapacity(pseudo.count)
        result.fields.reserveCapacity(fields.count)
        for field in pseudo { result.pseudo.append(try field.checkedForSending()) }
        for field in fields { result.fields.append(try field.checkedForSending()) }
        return result
    }

    /// Checks one part of a block (`asPseudo`: the pseudo-header fields); true when a name needs
    /// lowercasing (such a field is checked once lowercased).
    private static func check(_ part: UnsafeBufferPointer<HTTP2Field>, asPseudo: Bool,
                              allowPseudo: Bool) -> Result<Bool, HTTP2Error> {
        var lowercased = false
        for index in part.indices {
            if asPseudo && !allowPseudo {
                return .failure(HTTP2Error(.invalidField, "pseudo-header field '\(part[index].nameString)' in trailers"))
            }
            if asPseudo && !part[index].isPseudo {
                return .failure(HTTP2Error(.invalidField, "'\(part[index].nameString)' is not a pseudo-header field"))
            }
            if !asPseudo && part[index].isPseudo {
                return .failure(HTTP2Error(.invalidField,
                                           "pseudo-header field '\(part[index].nameString)' after regular fields"))
            }
            if part[index].hasUppercaseName {
                lowercased = true
            } else {
                do { try part[index].checkLowercased() } catch { return .failure(error) }
            }
        }
        return .success(lowercased)
    }
}
