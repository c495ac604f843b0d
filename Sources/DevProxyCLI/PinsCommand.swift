import CertAuthority
import Foundation

/// `devproxy pins FILE...`: the SPKI pin of every certificate, key or CSR in the files.
enum PinsCommand {
    struct Row: Encodable {
        let file: String
        let kind: String
        let subject: String?
        let issuer: String?
        let key: String
        let notAfter: String?
        let pin: String
        let spkiSHA256: String
        let spkiSHA1: String

        enum CodingKeys: String, CodingKey {
            case file, kind, subject, issuer, key, pin
            case notAfter = "not_after", spkiSHA256 = "spki_sha256", spkiSHA1 = "spki_sha1"
        }
    }

    static let usage = """
    SPKI pins (sha256/<base64>) for TrustKit, Android Network Security Config and OkHttp.

      devproxy pins ca/root.pem                      the team root's pin
      devproxy pins chain.pem next-root.csr --json   every certificate, plus a backup pin from a CSR
      devproxy pins next-root.key                    a key's pin: the backup pin for rotation
      devproxy pins --host api.acme.dev:443          a live server's chain (--proxy HOST:PORT, --json,
                                                     --resolve HOST:PORT:ADDRESS)
      devproxy pins snippet --domain api.acme.dev --format trustkit --backup next-root.csr
      devproxy pins publish prod-ca.pem --backup next.csr --expires 2027-06-30 --min-app-version 2.4.0 --out pins.json
      devproxy pins verify pins.json --signature pins.json.sig --key pins.json.sig.pub   (see pins verify --help)
      devproxy pins --format raw-key chain.pem        what a hand-written pinner hashing SecKey bytes holds
      devproxy pins --format all --host api.acme.dev  spki, raw-key, trustkit and certificate, per certificate

    Forms (--format): spki (SHA-256 of the DER SubjectPublicKeyInfo: TrustKit, NSC, OkHttp, curl),
    raw-key (SHA-256 of SecKeyCopyExternalRepresentation's bytes: PKCS#1 RSAPublicKey or 04||X||Y),
    trustkit (fixed ASN.1 header + raw key, TrustKit's way), certificate (SHA-256 of the whole DER).

    The pin equals: openssl x509 -pubkey -noout -in CERT | openssl pkey -pubin -outform DER |
                    openssl dgst -sha256 -binary | base64
    """

    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" || raw.isEmpty {
            return Output.usage(usage, missing: raw.isEmpty)
        }
        if raw.first == "snippet" { return try PinsSnippetCommand.run(raw.dropFirst()) }
        if raw.first == "publish" { return try PinsPublishCommand.publish(raw.dropFirst()) }
        if raw.first == "verify" { return try PinsPublishCommand.verify(raw.dropFirst()) }
        if raw.contains(where: { $0 == "--host" || $0.hasPrefix("--host=") }) { return try PinsLiveCommand.run(raw) }
        let arguments = try Arguments(raw, valued: ["format"], booleans: ["json"])
        let forms = try arguments.value("format").map(PinsFormatOutput.forms)
        var formSources: [(String, Int, PinSource)] = []
        var rows: [Row] = []
        for file in arguments.positionals {
            let sources: [PinSource]
            do {
                sources = try PinSource.all(in: try SecureFile.read(file, what: "the file"))
            } catch let error as CAError {
                throw CommandFailure("\(file): \(error.reason)")
            }
            formSources += sources.enumerated().map { (file, $0.offset, $0.element) }
            rows += sources.map { source in
                Row(file: file, kind: source.kind.rawValue, subject: source.subject, issuer: source.issuer,
                    key: source.keyDescription, notAfter: source.notAfter.map(ISO8601.string), pin: source.pin,
                    spkiSHA256: SPKIPin.base64SHA256(source.spkiDER), spkiSHA1: SPKIPin.base64SHA1(source.spkiDER))
            }
        }
        if let forms {
            PinsFormatOutput.print(PinsFormatOutput.rows(formSources, forms: forms), json: arguments.flag("json"))
            return 0
        }
        if arguments.flag("json") {
            Output.json(rows)
            return 0
        }
        for (index, row) in rows.enumerated() {
            if index > 0 { Output.line() }
            Output.line("\(row.file) (\(row.kind.replacingOccurrences(of: "_", with: " ")))")
            if let subject = row.subject { Output.line("  subject    \(subject)") }
            if let issuer = row.issuer { Output.line("  issuer     \(issuer)") }
            Output.line("  key        \(row.key)")
            if let notAfter = row.notAfter { Output.line("  not after  \(notAfter)") }
            Output.line("  pin        \(row.pin)")
            guard row.kind != "certificate" else { continue }
            // A bundle's key belongs to its intermediate: pinning an engineer's key as "the backup"
            // would let that one engineer's intermediate past every app's pins.
            if Self.isQAAlternateRoot(row.spkiSHA256, beside: row.file) {
                // It said "use it as the backup pin": an app that pinned it would trust the persona
                // that stands for an unpinned CA, and every QA run would pass it.
                Output.line("             (the QA alternate root's key (`devproxy qa init`): never pin it; it stands for "
                            + "an unpinned CA under the unpinned persona)")
            } else if let owner = rows.first(where: { $0.file == row.file && $0.kind == "certificate" && $0.spkiSHA256 == row.spkiSHA256 }) {
                Output.line("             (the key of \(owner.subject ?? "a certificate") in this file, not a backup pin: a backup "
                            + "pin is a key no certificate uses yet, such as `devproxy ca init --next`)")
            } else {
                Output.line("             (a key or CSR: use it as the backup pin for the next key)")
            }
        }
        return 0
    }

    /// Whether a key whose SPKI hash is `spkiSHA256` is the QA alternate root's in the CA
    /// directory `file` is in (`qa-alternate-root.pem` beside it).
    static func isQAAlternateRoot(_ spkiSHA256: String, beside file: String) -> Bool {
        guard let root = QAAlternateRoot(store: CAStore(directory: PathName.directory(of: file))).certificate else { return false }
        return SPKIPin.base64SHA256(root.spkiDER) == spkiSHA256
    }
}
