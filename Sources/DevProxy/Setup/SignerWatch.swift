import CertAuthority
import Foundation
import Synchronization

/// `devproxy run` on a team CA's intermediate, near its end: takes the one that replaces it
/// without a restart, and says once that the end is near and once that it has passed.
///
/// A team's intermediates are short-lived (7 days by default) and a proxy is often left running
/// longer: at the end every intercepted host failed (`leaf_refused`) until it was restarted, and
/// nothing said so beforehand but the start-up banner. The replacement is the bundle at the same
/// `--intermediate` path (the engineer copies the new one over it), or, without one, the newest
/// active intermediate for the engineer in the CA directory; it is looked for when that file
/// (the bundle, or the ledger) changed since the last look, and at least once a minute.
public final class SignerWatch: Sendable {
    /// What one look found.
    public struct Outcome: Sendable {
        /// The intermediate to sign with from now on, when one replaces the current one.
        public var replacement: Signer?
        /// Lines for the console (`warning: …`), each said once.
        public var warnings: [String] = []
    }

    private struct State {
        var current: Signer
        var lastLook: Date?
        /// The watched file's modification time, size and inode at the last look.
        var lastFile: String?
        var warnedEnding: Bool
        var warnedEnded = false
        var warnedOtherRoot: String?
    }

    private let selection: SignerSelection
    /// How often to look when the file has not changed.
    private let interval: TimeInterval
    private let state: Mutex<State>

    /// - Parameters:
    ///   - selection: how `run` chose the current signer (a bundle path, or the CA directory).
    ///   - current: the signer it chose.
    ///   - interval: how often to look when nothing changed. Default a minute.
    public init(selection: SignerSelection, current: Signer, interval: TimeInterval = 60, now: Date = Date()) {
        self.selection = selection
        self.interval = interval
        // Within a day of the end, the start-up lines already said so (`select`'s warning).
        let warnedAtStart = current.certificate.notAfter.timeIntervalSince(now) < 24 * 3600
        state = Mutex(State(current: current, warnedEnding: warnedAtStart))
    }

    /// The file whose change means a new intermediate may be there.
    private var watchedPath: String { selection.bundlePath ?? selection.store.ledgerPath }

    /// Looks for the replacement, at most once per `interval` unless the watched file changed.
    public func look(at now: Date = Date()) -> Outcome {
        let file = (try? FileManager.default.attributesOfItem(atPath: watchedPath)).map { attributes in
            [FileAttributeKey.modificationDate, .size, .systemFileNumber].map { "\(attributes[$0] ?? "")" }.joined(separator: " ")
        }
        return state.withLock { state in
            var outcome = Outcome()
            let due = state.lastLook.map { now.timeIntervalSince($0) >= interval } ?? true
            guard due || file != state.lastFile else { return outcome }
            (state.lastLook, state.lastFile) = (now, file)
            let current = state.current
            // Issued after the current one (a replacement, even one with a shorter life), or lasting longer.
            if let found = candidate(at: now), found.certificate.serialHex != current.certificate.serialHex,
               found.certificate.notBefore > current.certificate.notBefore
                   || found.certificate.notAfter > current.certificate.notAfter {
                if trusted(found, sameAs: current) {
                    state = State(current: found, lastLook: now, lastFile: file, warnedEnding: false)
                    outcome.replacement = found
                    return outcome
                }
                if state.warnedOtherRoot != found.certificate.serialHex {
                    state.warnedOtherRoot = found.certificate.serialHex
                    outcome.warnings.append("\(watchedPath) now holds the intermediate \(found.certificate.serialHex) of another root "
                                            + "(\(found.root?.subject ?? "unknown")) than the one clients were told to trust "
                                            + "(\(current.root?.subject ?? "unknown")): restart devproxy run to switch roots")
                }
            }
            let ends = current.certificate.notAfter
            if now >= ends, !state.warnedEnded {
                state.warnedEnded = true
                outcome.warnings.append("your intermediate \(current.certificate.serialHex) ended at \(ISO8601.string(ends)): every "
                                        + "intercepted host fails (leaf_refused) until a new one is in place: "
                                        + "\(remedy(for: current)), and DevProxy takes it without a restart")
            } else if now < ends, !state.warnedEnding {
                state.warnedEnding = true
                let left = ends.timeIntervalSince(now)
                outcome.warnings.append("your intermediate \(current.certificate.serialHex) ends at \(ISO8601.string(ends)) (in "
                                        + "\(Int(left / 3600)) h \(Int(left.truncatingRemainder(dividingBy: 3600) / 60)) min): "
                                        + "\(remedy(for: current)), and DevProxy takes it without a restart")
            }
            return outcome
        }
    }

    /// What `select` picks now, or nil (none valid yet). A CA directory that is gone is not
    /// re-created: `select` would make a local development CA there.
    private func candidate(at now: Date) -> Signer? {
        guard selection.bundlePath != nil || selection.store.exists else { return nil }
        return try? selection.select(now: now).signer
    }

    /// Whether clients that trust `current`'s root also trust `found`: the same root signed it,
    /// or its chain holds a cross-certificate that root signed (a rotation).
    private func trusted(_ found: Signer, sameAs current: Signer) -> Bool {
        guard let root = current.root else { return true }
        return ([found.certificate] + found.chain).contains { $0.isIssued(by: root) }
    }

    /// What the engineer does to get the next intermediate in.
    private func remedy(for current: Signer) -> String {
        let email = current.certificate.email ?? selection.email
        if let path = selection.bundlePath {
            // The security lead's CA directory is not this machine's: the command names none.
            return "put a new bundle from your security lead (`devproxy ca issue --email \(email)`) at \(path)"
        }
        return "get a new one issued into \(selection.store.directory) (`\(selection.issueCommand(email))`)"
    }
}
