import CertAuthority
import Foundation

/// `devproxy ca init --next` and `devproxy ca rotate`: rotating the team root that apps pin.
///
/// The order (docs/pinning.md, "Rotating the team root"): make the next key and ship its pin as
/// the backup pin; rotate once those builds are out; move devices to the new root; retire the
/// old pin after the transition window.
enum CARotateCommand {
    static let rotateUsage = """
    devproxy ca rotate: the next root key (from `ca init --next`) becomes the root.

      devproxy ca rotate                                      once app builds that pin the next key are out
      devproxy ca rotate --name "Acme Dev Root 2027" --days 3650 --transition-days 180 --passphrase-file root.pass
      devproxy ca init --next                                 before: make the next key; ship its pin as the backup

    Options: --name NAME (default: the current root's, with a generation: "Acme Dev Root G2")  --days N (default 3650)
             --transition-days N (default 180: how long the cross-certificate, the new root signed by
             the old, keeps devices that trust only the old root working)  --passphrase-file FILE  --ca-dir DIR
    The old root is kept as a retired root; new intermediates come from the new one.
    \(CACommand.commonOptions)
    \(CACommand.passphraseNote)
    Then: devproxy ca issue --email ENGINEER@EXAMPLE.COM, and devproxy ca export --format der --out root.crt
    """

    /// `ca init --next`: the next root key, encrypted like `root.key`, and its pin.
    static func initializeNext(_ arguments: Arguments) throws -> Int32 {
        for option in ["name", "days"] where arguments.value(option) != nil {
            throw UsageError("--\(option) is for `ca rotate`, when the next root's certificate is made; "
                             + "`ca init --next` makes only the key")
        }
        let store = CACommand.store(arguments)
        let secret = try CACommand.passphrase(arguments)
        let key = try store.makeNextRootKey(keyType: try CACommand.keyType(arguments), passphrase: secret)
        let root = try store.rootCertificate()
        let dir = CACommand.caDirSuffix(arguments)
        Output.line("Made the next root key in \(store.directory); the root is unchanged until `devproxy ca rotate\(dir)`.")
        Output.line()
        let keyText = String(decoding: try SecureFile.read(store.nextRootKeyPath, what: "the next root key"), as: UTF8.self)
        let encrypted = keyText.contains("ENCRYPTED") ? ", encrypted like root.key" : ", NOT encrypted, like root.key"
        Output.line("  key          \(key.keyDescription) in \(store.nextRootKeyPath) (0600\(encrypted))")
        Output.line("  public key   \(store.nextRootPublicKeyPath)")
        Output.line("  SPKI pin     \(key.pin)")
        Output.line("  current root \(root.pin) (keep pinning it)")
        Output.line("  recorded in  \(store.ledgerPath)")
        Output.line()
        Output.line("Next:")
        Output.line("  ship both pins in every app build now (the next key is the backup pin):")
        Output.line("    devproxy pins snippet\(dir) --domain api.example.com --format okhttp   (adds the next key from "
                    + "\(store.directory))")
        Output.line("  once those builds are out: devproxy ca rotate\(dir)")
        return 0
    }

    /// `ca rotate`: the next key becomes the root, with a cross-certificate from the old one.
    static func rotate(_ raw: ArraySlice<String>) throws -> Int32 {
        let arguments = try Arguments(raw, valued: ["ca-dir", "name", "days", "transition-days", "passphrase-file"],
                                      booleans: [])
        guard arguments.positionals.isEmpty else {
            throw UsageError("`ca rotate` takes no arguments; see `devproxy ca --help`")
        }
        let days = try arguments.integer("days") ?? 3650
        let transition = try arguments.integer("transition-days") ?? 180
        guard days > 0 else { throw UsageError("--days must be a positive number of days") }
        guard transition > 0 else { throw UsageError("--transition-days must be a positive number of days") }
        let store = CACommand.store(arguments)
        let rotation = try store.rotate(name: arguments.value("name"), days: days, transitionDays: transition,
                                        passphrase: try CACommand.passphrase(arguments))
        Output.line("Rotated the team root in \(store.directory).")
        Output.line()
        Output.line("  new root     \(rotation.root.subject), valid until \(Output.date(rotation.root.notAfter))")
        Output.line("               SPKI pin \(rotation.root.pin)")
        let windowEnd = Output.date(rotation.cross.notAfter)
        Output.line("  cross        \(store.crossCertificatePath): the new root signed by the old, until \(windowEnd)")
        Output.line("  old root     \(rotation.previous.subject), kept in \(rotation.retiredCertificatePath)")
        Output.line("               SPKI pin \(rotation.previous.pin) (being retired)")
        Output.line("  recorded in  \(store.ledgerPath)")
        Output.line()
        Output.line("Until \(windowEnd) DevProxy serves leaf → intermediate → cross-certificate, so devices")
        Output.line("that trust only the old root and apps pinning either root keep working. Next:")
        let dir = CACommand.caDirSuffix(arguments)
        Output.line("  devproxy ca issue\(dir) --email ENGINEER@EXAMPLE.COM      new intermediates come from the new root")
        Output.line("  devproxy ca export\(dir) --format der --out root.crt       the new root, for devices once apps pin it")
        return 0
    }
}
