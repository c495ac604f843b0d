/// Validation of the email an intermediate is tagged with.
public enum EmailAddress {
    /// Checks `text` is one plausible address: exactly one `@`, a non-empty local part, a
    /// domain with at least one dot and no empty labels, no spaces or control characters,
    /// and nothing OpenSSL's configuration syntax would read as a separator.
    ///
    /// - Throws: `.invalidInput` saying what is wrong.
    public static func validate(_ text: String) throws {
        func fail(_ why: String) -> CAError { CAError(.invalidInput, "\"\(text)\" is not an email address: \(why)") }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw fail("it needs exactly one @") }
        if let bad = text.unicodeScalars.first(where: { $0.value < 0x21 || $0.value == 0x7f || $0 == "," || $0 == "\"" || $0 == "\\" }) {
            throw fail(bad.value == 0x20 ? "it contains a space" : "it contains the character U+\(String(bad.value, radix: 16, uppercase: true))")
        }
        guard !parts[0].isEmpty else { throw fail("the part before @ is empty") }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }) else { throw fail("the domain after @ is not a domain") }
        guard text.utf8.count <= 254 else { throw fail("it is longer than 254 characters") }
    }
}
