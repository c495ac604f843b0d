/// Validation of the email an intermediate is tagged with.
public enum EmailAddress {
    /// Checks `text` is one plausible address: exactly one `@`, a non-empty local part, a
    /// domain with at least one dot and no empty labels, no spaces or control characters,
    /// and nothing OpenSSL's configuration syntax would read as a separator.
    ///
    /// - Throws: `.invalidInput` saying what is wrong.
    public static func validate(_ text: String) throws {
        // The address as given, with control characters escaped: a newline in it made the
        // `error:` line two lines.
        let shown = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? "\\u{\(String($0.value, radix: 16))}" : String($0) }
            .joined()
        func fail(_ why: String) -> CAError { CAError(.invalidInput, "\"\(shown)\" is not an email address: \(why)") }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw fail("it needs exactly one @") }
        if let bad = text.unicodeScalars.first(where: { $0.value < 0x21 || $0.value == 0x7f || $0 == "," || $0 == "\"" || $0 == "\\" || $0 == "/" }) {
            // `/` too: the default bundle is `intermediates/<email>-<serial>.pem`, and
            // `../../x@acme.dev` wrote a private key outside the CA directory.
            throw fail(bad.value == 0x20 ? "it contains a space"
                       : bad.value < 0x21 || bad.value == 0x7f ? "it contains the control character U+\(String(bad.value, radix: 16, uppercase: true))"
                       : "it contains \"\(bad)\"")
        }
        // OpenSSL refuses anything else in a certificate's emailAddress (an IA5String), with
        // "illegal characters"; an internationalised address has no place there.
        guard text.unicodeScalars.allSatisfy(\.isASCII) else {
            throw fail("it has non-ASCII characters; a certificate holds an ASCII address (the domain as xn--…)")
        }
        guard !parts[0].isEmpty else { throw fail("the part before @ is empty") }
        guard parts[0].utf8.count <= 64 else { throw fail("the part before @ is longer than 64 characters") }
        guard !parts[0].hasPrefix("."), !parts[0].hasSuffix("."), !parts[0].contains("..") else {
            throw fail("the part before @ starts or ends with a dot or has two in a row")
        }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { throw fail("the domain after @ is not a domain") }
        guard labels.allSatisfy({ label in
            label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                    || $0 == "-" || $0 == "_" }
        }) else {
            throw fail("the domain after @ is not a host name (letters, digits, - and _, no - at a label's ends)")
        }
        guard text.utf8.count <= 254 else { throw fail("it is longer than 254 characters") }
    }
}
