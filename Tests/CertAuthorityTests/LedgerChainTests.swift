@testable import CertAuthority
import Foundation
import Testing

/// `Ledger.verifyChain` on ledger bytes: what breaks the chain and what does not.
@Suite struct LedgerChainTests {
    /// A record line naming `previous` (nil: none), newline included.
    func line(_ serial: String, previous: [UInt8]?) -> [UInt8] {
        let named = previous.map { ",\"previous_sha256\":\"\(Digest.sha256($0).hex)\"" } ?? ""
        return Array("{\"issued_at\":\"x\"\(named),\"serial\":\"\(serial)\",\"type\":\"root\"}\n".utf8)
    }

    @Test func blankLinesAreNotRecordsAndBreakNothing() {
        let first = line("1", previous: [])
        let second = line("2", previous: first)
        let check = Ledger.verifyChain(first + Array("\n\n".utf8) + second)
        #expect(check.isIntact, "\(check.breaks)")
        #expect(check.records == 2 && check.unchained == 0)
        #expect(check.lastDigest == Digest.sha256(second).hex)
    }

    /// A line that is no record is a problem, and the record after it no longer follows its
    /// predecessor: the chain runs through the damaged line's bytes.
    @Test func aDamagedLineIsAProblemAndABreak() {
        let first = line("1", previous: [])
        let damaged = Array(String(decoding: line("2", previous: first), as: UTF8.self).replacingOccurrences(of: "{", with: "[").utf8)
        let third = line("3", previous: line("2", previous: first))
        let check = Ledger.verifyChain(first + damaged + third)
        #expect(!check.isIntact)
        #expect(check.problems.map(\.line) == [2])
        #expect(check.breaks.map(\.record) == [2] && check.breaks.map(\.line) == [3], "\(check.breaks)")
    }

    /// Records before the first hashed one are unchained; the first hashed one is judged against
    /// the last of them.
    @Test func theChainStartsAtTheFirstHashedRecord() {
        let old = line("1", previous: nil) + line("2", previous: nil)
        let chained = line("3", previous: line("2", previous: nil))
        let check = Ledger.verifyChain(old + chained + line("4", previous: chained))
        #expect(check.isIntact, "\(check.breaks)")
        #expect(check.records == 4 && check.unchained == 2)
        let empty = Ledger.verifyChain([])
        #expect(empty.isIntact && empty.records == 0 && empty.lastDigest == Digest.sha256([]).hex)
    }
}
