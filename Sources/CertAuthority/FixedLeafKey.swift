import Foundation

/// `devproxy run --leaf-key HOST_GLOB=KEY.pem`: the leaves of matching hosts are minted with this
/// key instead of a fresh one, so a debug build whose leaf-only pinner holds the key's pin
/// accepts them. Never a CA's key: `refusingCAKeys` checks.
public struct FixedLeafKey: Sendable {
    public let pattern: GlobPattern
    public let key: PrivateKey
    /// Where the key came from, for messages.
    public let path: String

    public init(pattern: GlobPattern, key: PrivateKey, path: String) {
        self.pattern = pattern
        self.key = key
        self.path = path
    }

    /// Parses `GLOB=PATH` and reads the key (unencrypted PEM or DER; 0600 is not demanded of a
    /// leaf key, whose whole point is to be shared with a debug build's pin).
    ///
    /// - Throws: `.invalidInput` for a malformed argument, `.corruptKey` when the file holds no
    ///   private key.
    public static func parse(_ argument: String) throws -> FixedLeafKey {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex,
              argument.index(after: equals) != argument.endIndex else {
            throw CAError(.invalidInput, "--leaf-key \(argument) is not HOST_GLOB=KEY.pem")
        }
        let pattern = String(argument[..<equals])
        let path = String(argument[argument.index(after: equals)...])
        let bytes: [UInt8]
        do {
            bytes = try SecureFile.contents(of: path)
        } catch {
            throw CAError(.invalidInput, "--leaf-key: cannot read \(path): \(error.reason)")
        }
        let key: PrivateKey
        do {
            key = try PrivateKey(pem: [UInt8](bytes), passphrase: nil)
        } catch let error as CAError where error.code == .passphraseRequired {
            // PrivateKey's own advice (--passphrase-file) does not apply here: that passphrase is
            // the CA's, and a leaf key is never one.
            throw CAError(.invalidInput, "--leaf-key \(path) is encrypted; a leaf key is read unencrypted (its pin goes "
                          + "into a debug build anyway): openssl pkey -in \(path) -out leaf.key. An encrypted key is "
                          + "usually a CA's, which a leaf never carries")
        } catch let error as CAError {
            throw CAError(error.code, "--leaf-key \(path): \(error.reason)")
        }
        return FixedLeafKey(pattern: GlobPattern(pattern), key: key, path: path)
    }

    /// Throws when the key is one of `authorities`' keys or a CA the ledger records.
    ///
    /// A leaf minted with a CA's key would hand that key's pin to a debug build and put the CA's
    /// key in a leaf's TLS handshakes; DevProxy never signs leaves with a CA key pair.
    /// - Parameters:
    ///   - authorities: the team root, the signer and its chain, the QA alternate root.
    ///   - ledgerPins: `sha256/…` SPKI pins of every CA the team ledger recorded.
    public func refusingCAKeys(_ authorities: [Certificate], ledgerPins: Set<String>) throws {
        let spki = try key.publicKeyDER
        let pin = SPKIPin.sha256(of: spki)
        if let authority = authorities.first(where: { $0.spkiDER == spki }) {
            throw CAError(.invalidInput, "--leaf-key \(path) is the key of \(authority.subject), a CA; "
                          + "give a leaf key of its own (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)")
        }
        if ledgerPins.contains(pin) {
            throw CAError(.invalidInput,
                          "--leaf-key \(path) is the key of a CA in the team ledger; give a leaf key of its own")
        }
    }
}

extension Array where Element == FixedLeafKey {
    /// The key for the first rule matching `name`, if any.
    func key(for name: LeafName) -> PrivateKey? {
        first { $0.pattern.matches(name.text) }?.key
    }
}
