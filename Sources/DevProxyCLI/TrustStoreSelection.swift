import DevProxy
import Foundation

/// The stores `--store`, `--nss-db` and `--java-keystore` name, found on this machine.
struct TrustStoreSelection {
    private(set) var stores: [any TrustStore] = []
    /// Stores `all` looked for and did not find: said, not failed.
    private(set) var notes: [String] = []
    /// Stores asked for by name and not found: each an `error:` line.
    private(set) var errors: [String] = []

    init(choice: String, nssDatabases: [String], javaKeystore: String?) {
        let all = choice == "all"
        if all || choice == "system" {
            #if os(macOS)
            stores.append(MacKeychainTrustStore())
            #else
            if let layout = SystemTrustStore.Layout.detect() {
                stores.append(SystemTrustStore(layout: layout))
            } else {
                let known = SystemTrustStore.Layout.all.map { "\($0.family) (\($0.anchors) and \($0.tool))" }.joined(separator: ", ")
                append("system store: none of \(known) is here", asked: !all)
            }
            #endif
        }
        if all || choice == "nss" {
            let found = nssDatabases.isEmpty ? NSSTrustStore.discover()
                : nssDatabases.map { NSSTrustStore(directory: $0, reader: "--nss-db") }
            if found.isEmpty {
                append("NSS: no database in ~/.pki/nssdb or a Firefox profile (Chromium and Firefox create theirs on first run; or give --nss-db DIR)", asked: !all)
            }
            stores += found as [any TrustStore]
        }
        if all || choice == "java" {
            if let keystore = javaKeystore ?? JavaTrustStore.defaultKeystore() {
                stores.append(JavaTrustStore(keystore: keystore))
            } else {
                append("Java: no cacerts under $JAVA_HOME or the java on PATH (give --java-keystore FILE)", asked: !all)
            }
        }
    }

    private mutating func append(_ message: String, asked: Bool) {
        if asked { errors.append(message) } else { notes.append(message) }
    }
}
