import CertAuthority
import Foundation
import PinningPolicy

/// `devproxy pins publish` and `devproxy pins verify`: remote pin sets (`/.well-known/pins.json`).
enum PinsPublishCommand {
    static let usage = """
    Remote pin sets: the /.well-known/pins.json an app fetches to refresh its pins
    ({"hashes": [...], "expiresAt": DATE, "minAppVersion": "..."}).

      devproxy pins publish prod-ca.pem --backup next-root.csr --expires 2027-06-30 --min-app-version 2.4.0 \\
                            --out pins.json
      devproxy pins publish --pin sha256/… --backup next.pub --expires 2027-06-30 --min-app-version 2.4.0 \\
                            --sign-key pinset-sign.key --out pins.json          also writes pins.json.sig

    Primary pins come from FILE arguments (certificates, keys, CSRs) and --pin; backup pins from
    --backup FILE|PIN (repeatable). --hash spki|raw-key|trustkit|certificate (default spki) is the
    form the app's pinner computes. --expires takes yyyy-MM-dd (midnight UTC) or an RFC 3339 time.

    --date-format reference|iso8601|unix (default reference) is how expiresAt is written. Swift's
    JSONDecoder() reads a Date by default as a number of seconds since 2001-01-01 00:00:00 UTC
    (.deferredToDate), so `reference` is what an app decoding with a plain JSONDecoder() (the usual
    PinRotationManager) accepts; iso8601 needs .iso8601 and unix .secondsSince1970 in the
    app, or the whole set fails to decode and the app silently keeps its bundled pins.

    --sign-key KEY (EC P-256, PEM; passphrase from --passphrase-file or $DEVPROXY_CA_PASSPHRASE)
    writes a detached ECDSA-SHA256 signature (DER) of the file's exact bytes to OUT.sig (or
    --signature FILE); `openssl dgst -sha256 -verify KEY.pub -signature pins.json.sig pins.json`
    checks it, as does `devproxy pins verify` (see `devproxy pins verify --help`).
    """

    static let verifyUsage = """
    devproxy pins verify: check a remote pin set as an app would read it: does it decode, is it
    signed by the key, when does it expire, which pins does it carry.

      devproxy pins verify pins.json                                             decodes? expired?
      devproxy pins verify pins.json --signature pins.json.sig --key pins.json.sig.pub
      devproxy pins verify pins.json --date-format iso8601 --json                one JSON object

    Options: --signature FILE (a detached ECDSA-SHA256 signature, DER, as `pins publish --sign-key`
             writes it)  --key FILE (the signer's public key, PEM)  --date-format reference|iso8601|unix
             (default reference: how the app's JSONDecoder reads expiresAt)  --json
    The same check by hand: openssl dgst -sha256 -verify pins.json.sig.pub -signature pins.json.sig pins.json
    Exit codes: 0 the set decodes (and the signature, if given, is valid); 1 it does not; 2 usage.
    Next: publish a new set with `devproxy pins publish` (its --help has examples).
    """

    static func publish(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" { Output.line(usage); return 0 }
        let arguments = try Arguments(raw, valued: ["pin", "backup", "expires", "min-app-version", "date-format", "hash",
                                                    "sign-key", "passphrase-file", "out", "signature"], booleans: [])
        let hash = try hashForm(arguments)
        let format = try dateFormat(arguments)
        guard let expiresText = arguments.value("expires") else {
            throw UsageError("--expires DATE is required (yyyy-MM-dd)")
        }
        guard let expires = date(expiresText) else {
            throw UsageError("--expires \(expiresText) is not a yyyy-MM-dd date or an RFC 3339 time")
        }
        guard let version = arguments.value("min-app-version"), !version.isEmpty else {
            throw UsageError("--min-app-version VERSION is required: an app's PinConfig (hashes, expiresAt, minAppVersion) "
                             + "has no default for it, and a set without it fails to decode")
        }
        let primary = try (arguments.positionals + arguments.values("pin")).map { try pin($0, hash: hash) }
        let backup = try arguments.values("backup").map { try pin($0, hash: hash) }
        guard !primary.isEmpty else { throw UsageError("give the primary pins: FILE arguments or --pin") }
        if backup.isEmpty { Output.warning("no --backup pin: a key change leaves apps with no pin that matches") }
        var hashes: [String] = []
        for pin in primary + backup where !hashes.contains(pin) { hashes.append(pin) }
        let set = RemotePinSet(hashes: hashes, expiresAt: expires, minAppVersion: version)
        let bytes = try set.json(dateFormat: format)
        if expires < Date() { Output.warning("--expires \(expiresText) is in the past: apps ignore an expired set") }
        let signKey = try arguments.value("sign-key").map { path -> PrivateKey in
            do {
                let passphrase = try PassphraseSource.resolve(file: arguments.value("passphrase-file")).read()
                return try PrivateKey(pem: try SecureFile.read(path, what: "the signing key"), passphrase: passphrase)
            } catch let error as CAError {
                throw CommandFailure("\(path): \(error.reason)")
            }
        }
        let signature = try signKey.map { try DetachedSignature.sign(bytes, with: $0) }
        guard let out = arguments.value("out") else {
            if signature != nil { throw UsageError("--sign-key needs --out FILE (the signature goes to FILE.sig)") }
            Output.raw(bytes)
            return 0
        }
        try SecureFile.write(bytes, to: out, mode: SecureFile.publicMode)
        Output.wrote(to: out, "Wrote the pin set to \(out): \(hashes.count) pin(s) (\(primary.count) primary, "
                     + "\(backup.count) backup), expiresAt \(ISO8601.string(expires)) as \(format.rawValue), "
                     + "minAppVersion \(version).")
        if let signature, let signKey {
            let path = arguments.value("signature") ?? out + ".sig"
            try SecureFile.write(signature, to: path, mode: SecureFile.publicMode)
            let publicPath = path + ".pub"
            let publicPEM = PEMBlock(label: "PUBLIC KEY", der: try signKey.publicKeyDER).text
            try SecureFile.write(Array(publicPEM.utf8), to: publicPath, mode: SecureFile.publicMode)
            Output.line("Signed it (ECDSA P-256, SHA-256, DER) to \(path); the public key is in \(publicPath):")
            Output.line("  openssl dgst -sha256 -verify \(publicPath) -signature \(path) \(out)")
        }
        return 0
    }

    static func verify(_ raw: ArraySlice<String>) throws -> Int32 {
        if raw.first == "--help" || raw.first == "-h" { Output.line(verifyUsage); return 0 }
        let arguments = try Arguments(raw, valued: ["date-format", "signature", "key"], booleans: ["json"])
        guard arguments.positionals.count == 1, let path = arguments.positionals.first else {
            throw UsageError("give one pin set FILE; see `devproxy pins verify --help`")
        }
        let format = try dateFormat(arguments)
        let bytes = try SecureFile.read(path, what: "the pin set")
        let set: RemotePinSet
        do {
            set = try RemotePinSet.decode(bytes, dateFormat: format)
        } catch let error as PolicyError {
            throw CommandFailure("\(path): \(error.reason)")
        }
        var signatureValid: Bool?
        if let signaturePath = arguments.value("signature") {
            guard let keyPath = arguments.value("key") else {
                throw UsageError("--signature needs --key KEY (public key or certificate)")
            }
            let key: PinSource
            do {
                guard let first = try PinSource.all(in: try SecureFile.read(keyPath, what: "the key")).first else {
                    throw CommandFailure("\(keyPath): no key in it")
                }
                key = first
            } catch let error as CAError {
                throw CommandFailure("\(keyPath): \(error.reason)")
            }
            let signature = try SecureFile.read(signaturePath, what: "the signature")
            signatureValid = try DetachedSignature.verify(signature, of: bytes, spkiDER: key.spkiDER)
        } else if arguments.value("key") != nil {
            throw UsageError("--key needs --signature FILE")
        }
        let expired = set.expiresAt <= Date()
        if arguments.flag("json") {
            Output.json(VerifyReport(hashes: set.hashes, expiresAt: ISO8601.string(set.expiresAt), expired: expired,
                                     minAppVersion: set.minAppVersion, dateFormat: format.rawValue,
                                     signatureValid: signatureValid))
        } else {
            Output.line("\(path): a pin set an app decoding dates as \(format.rawValue) accepts.")
            for hash in set.hashes { Output.line("  hash           \(hash)") }
            let state = expired ? " (expired: the app ignores the set)" : ""
            Output.line("  expiresAt      \(ISO8601.string(set.expiresAt))\(state)")
            Output.line("  minAppVersion  \(set.minAppVersion)")
            if let signatureValid { Output.line("  signature      \(signatureValid ? "valid" : "INVALID")") }
        }
        if signatureValid == false {
            Output.error("\(path): the signature does not match this file and key")
            return 1
        }
        if set.hashes.count < 2 { Output.warning("only one hash: no backup pin") }
        return 0
    }

    private struct VerifyReport: Encodable {
        let hashes: [String]
        let expiresAt: String
        let expired: Bool
        let minAppVersion: String
        let dateFormat: String
        let signatureValid: Bool?

        enum CodingKeys: String, CodingKey {
            case hashes, expired
            case expiresAt = "expires_at", minAppVersion = "min_app_version", dateFormat = "date_format"
            case signatureValid = "signature_valid"
        }
    }

    private static func hashForm(_ arguments: Arguments) throws -> PinHashForm {
        guard let name = arguments.value("hash") else { return .spki }
        guard let form = PinHashForm(rawValue: name) else {
            throw UsageError("--hash \(name) is not one of \(PinHashForm.choices)")
        }
        return form
    }

    private static func dateFormat(_ arguments: Arguments) throws -> RemotePinSet.DateFormat {
        guard let name = arguments.value("date-format") else { return .reference }
        guard let format = RemotePinSet.DateFormat(rawValue: name) else {
            throw UsageError("--date-format \(name) is not one of \(RemotePinSet.DateFormat.choices)")
        }
        return format
    }

    /// `yyyy-MM-dd` as midnight UTC, or an RFC 3339 time.
    private static func date(_ text: String) -> Date? {
        if let full = ISO8601.date(text) { return full }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.date(from: text)
    }

    /// A pin given as a file (certificate, key, CSR) or as text (`sha256/…` or bare base64),
    /// as bare base64 in `hash`'s form.
    private static func pin(_ argument: String, hash: PinHashForm) throws -> String {
        if FileManager.default.fileExists(atPath: argument) {
            let source: PinSource
            do {
                guard let first = try PinSource.all(in: try SecureFile.read(argument, what: "the file")).first else {
                    throw CommandFailure("\(argument): nothing to pin")
                }
                source = first
            } catch let error as CAError {
                throw CommandFailure("\(argument): \(error.reason)")
            }
            guard let digest = hash.digest(of: source) else {
                throw CommandFailure("\(argument): no \(hash.rawValue) form for it")
            }
            return digest.base64
        }
        let bare = argument.hasPrefix("sha256/") ? String(argument.dropFirst(7)) : argument
        guard Data(base64Encoded: bare)?.count == 32 else {
            throw CommandFailure("\(argument) is neither a file nor a SHA-256 pin "
                                 + "(sha256/ and 44 characters of base64)")
        }
        return bare
    }
}
