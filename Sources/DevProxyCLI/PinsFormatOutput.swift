import CertAuthority
import Foundation

/// `devproxy pins --format FORM`: each certificate's or key's pin in the form a hand-written
/// pinner computes (`PinHashForm`), so a team can see which one its code matches.
enum PinsFormatOutput {
    struct Row: Encodable {
        let source: String
        let position: Int
        let subject: String?
        let key: String
        let form: String
        /// Bare base64 of the SHA-256, as the articles' pinners hold it; nil when the form does
        /// not apply (a key has no certificate hash, Ed25519 has no raw-key form).
        let pin: String?
        let why: String?
    }

    /// The forms `--format` names: one, or `all`.
    static func forms(_ name: String) throws -> [PinHashForm] {
        if name == "all" { return PinHashForm.allCases }
        guard let form = PinHashForm(rawValue: name) else {
            throw UsageError("--format \(name) is not one of \(PinHashForm.choices), all")
        }
        return [form]
    }

    /// One row per source and form.
    static func rows(_ sources: [(String, Int, PinSource)], forms: [PinHashForm]) -> [Row] {
        sources.flatMap { name, position, source in
            forms.map { form in
                let digest = form.digest(of: source)
                let why: String? = digest != nil ? nil
                    : form == .certificate ? "not a certificate" : "SecKey cannot hold a \(source.keyDescription) key"
                return Row(source: name, position: position, subject: source.subject, key: source.keyDescription,
                           form: form.rawValue, pin: digest?.base64, why: why)
            }
        }
    }

    /// Prints the rows as text (grouped by certificate) or JSON.
    static func print(_ rows: [Row], json: Bool) {
        if json {
            Output.json(rows)
            return
        }
        // One form of one key: the hash alone, bare base64 as a pinner holds it, so
        // `curl --pinnedpubkey sha256//$(devproxy pins --format spki KEY)` works as written (the
        // source's heading line and the form's label went into the pin).
        if rows.count == 1, let pin = rows[0].pin {
            Output.line(pin)
            return
        }
        var last: (String, Int)?
        for row in rows {
            if last.map({ $0 != (row.source, row.position) }) ?? true {
                if last != nil { Output.line() }
                Output.line("\(row.source) [\(row.position)] \(row.subject ?? "(no subject)") (\(row.key))")
                last = (row.source, row.position)
            }
            let form = row.form.padding(toLength: 12, withPad: " ", startingAt: 0)
            Output.line("  \(form)\(row.pin ?? "none: \(row.why ?? "")")")
        }
    }
}
