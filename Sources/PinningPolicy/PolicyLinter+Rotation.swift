import CertAuthority
import Foundation

extension PolicyLinter {
    /// A root rotation in progress: the root being retired and its successor.
    ///
    /// After `ca rotate` the retiring root is the previous one and the successor the current
    /// root; while a key made by `ca init --next` waits, the retiring root is the current one and
    /// the successor that key.
    public struct Rotation: Sendable {
        /// SPKIs of the roots being retired.
        public var retiring: [[UInt8]]
        /// The successor's SPKI.
        public var successor: [UInt8]
        /// True when the successor is still only a key (`ca init --next`), not yet the root.
        public var successorIsNextKey: Bool

        public init(retiring: [[UInt8]], successor: [UInt8], successorIsNextKey: Bool) {
            self.retiring = retiring
            self.successor = successor
            self.successorIsNextKey = successorIsNextKey
        }
    }

    /// Entries that pin a retiring root but not its successor. With both roots trusted, a client
    /// builds the shorter path to the new root (OkHttp's chain cleaner does), so such an app
    /// blocks on every device that has moved to the new root.
    func lintRotation(_ policy: PinningPolicy) -> [PolicyLint] {
        guard let rotation, policy.customPinner == nil else { return [] }
        var pinned: [(String, [Pin])] = policy.domains.filter { !$0.excludedFromParent && !$0.pins.isEmpty }
            .map { ($0.pattern, $0.pins) }
        if let ats = policy.ats {
            pinned += ats.pinnedDomains.map { ($0.name, ($0.caIdentities ?? []) + ($0.leafIdentities ?? [])) }
        }
        let retiring = Set(rotation.retiring.flatMap(Self.digests(of:)))
        let successor = Set(Self.digests(of: rotation.successor))
        let successorPin = SPKIPin.sha256(of: rotation.successor)
        return pinned.compactMap { name, pins in
            let digests = Set(pins.map(\.digest))
            guard !digests.isDisjoint(with: retiring), digests.isDisjoint(with: successor) else { return nil }
            let message = rotation.successorIsNextKey
                ? "pins the team root but not the next root key (`devproxy ca init --next`); the root is being "
                    + "retired: ship \(successorPin) as the backup pin before `devproxy ca rotate`"
                : "pins only the team root being retired (rotated by `devproxy ca rotate`); devices that trust the new "
                    + "root build the shorter path to it and the app blocks there: add \(successorPin)"
            return PolicyLint(kind: .pinsOnlyRetiringRoot, domain: name, message: message)
        }
    }

    /// SHA-256 and SHA-1 of an SPKI: the digests a pin of that key can hold.
    private static func digests(of spki: [UInt8]) -> [[UInt8]] {
        [Digest.sha256(spki), Digest.sha1(spki)]
    }
}
