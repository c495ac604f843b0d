import CertAuthority
import Foundation

/// `devproxy ca ledger verify`: whether the ledger's hash chain is whole.
enum CALedgerCommand {
    static func run(_ raw: ArraySlice<String>) throws -> Int32 {
        guard let verb = raw.first else {
            throw UsageError("give a command: `devproxy ca ledger verify` checks that no record was edited or deleted")
        }
        guard verb == "verify" else {
            throw UsageError("unknown command `ca ledger \(verb)`; `devproxy ca ledger verify` checks the ledger's hash chain")
        }
        let arguments = try Arguments(raw.dropFirst(), valued: ["ca-dir"], booleans: [])
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument `\(arguments.positionals[0])`; the ledger is the CA directory's (--ca-dir DIR)")
        }
        let store = CACommand.store(arguments)
        let check: Ledger.ChainCheck
        do {
            check = try store.ledger.verifyChain()
        } catch let error as CAError {
            throw CommandFailure("\(store.ledgerPath): \(error.reason); is --ca-dir the team CA's directory?")
        }
        for problem in check.problems { Output.error("\(store.ledgerPath) \(problem)") }
        for broken in check.breaks { Output.error(broken.description) }
        guard check.isIntact else { return 1 }
        let plural = check.records == 1 ? "" : "s"
        let unchained = check.unchained == 0 ? ""
            : check.unchained == check.records ? "; none is chained yet (written before devproxy chained its ledger): the next "
                + "record starts the chain"
            : "; \(check.unchained) earlier record\(check.unchained == 1 ? " is" : "s are") not chained (written before "
                + "devproxy chained its ledger: an edit to them goes unseen)"
        Output.line("ledger intact: \(check.records) record\(plural) in \(store.ledgerPath)\(unchained)")
        Output.line("  last record  SHA-256 \(check.lastDigest)")
        Output.line("Keep that digest somewhere else (a ticket, the next audit): a chain shows an edited or deleted record, "
                    + "not records cut off its end.")
        return 0
    }
}
