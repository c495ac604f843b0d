import Foundation

/// The ledger's hash chain: each record names the SHA-256 of the record line before it, so a
/// line edited or deleted breaks the record after it.
///
/// The digest is over the previous line exactly as written, newline included
/// (`sed -n Kp ledger.jsonl | openssl dgst -sha256`); the first record of a ledger names the
/// digest of no bytes. Records written before the ledger was chained carry none: the chain starts
/// at the first record that names one, and every record after it must. A chain cannot show that
/// its last records were cut off: `ChainCheck.lastDigest` is the value to keep elsewhere.
extension Ledger {
    /// What `verifyChain` found.
    public struct ChainCheck: Sendable {
        /// A record that does not follow the one before it.
        public struct Break: Sendable, Equatable, CustomStringConvertible {
            /// 1-based among the records (blank lines are not records).
            public let record: Int
            public let line: Int
            public let reason: String
            public var description: String {
                record == 1 ? "ledger record 1 (line \(line)) \(reason)"
                    : "ledger record \(record) (line \(line)) does not follow record \(record - 1): \(reason)"
            }
        }

        /// Every record read.
        public var records = 0
        /// Records before the chain starts, written before records named their predecessor.
        public var unchained = 0
        /// SHA-256 (hex) of the last record's line: what the next record will name.
        public var lastDigest = Digest.sha256([]).hex
        public var breaks: [Break] = []
        /// Lines that are not records at all.
        public var problems: [Problem] = []

        /// Whether every line is a record and every chained record follows the one before it.
        public var isIntact: Bool { breaks.isEmpty && problems.isEmpty }
    }

    /// Reads the ledger and checks its chain.
    ///
    /// - Throws: `.notFound` when the ledger cannot be read at all.
    public func verifyChain() throws -> ChainCheck {
        Self.verifyChain(try SecureFile.read(path, what: "the ledger"))
    }

    /// Checks the chain of ledger bytes; exposed for tests.
    public static func verifyChain(_ bytes: [UInt8]) -> ChainCheck {
        var check = ChainCheck()
        check.problems = parse(bytes).problems
        let decoder = JSONDecoder()
        var previousLine: [UInt8] = []
        var chainStarted = false
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            guard !line.isEmpty else { continue }
            let written = Array(line) + [UInt8(ascii: "\n")]
            defer { previousLine = written }
            // A line that is no record is a problem of its own; the record after it is judged
            // against it all the same, so an edit that broke the JSON also breaks the chain.
            guard let record = try? decoder.decode(LedgerRecord.self, from: Data(line)) else { continue }
            check.records += 1
            let expected = Digest.sha256(previousLine).hex
            guard let named = record.previousSHA256 else {
                if chainStarted {
                    check.breaks.append(.init(record: check.records, line: index + 1, reason: "it names no previous record, "
                                              + "where every record after the chain started must (written around devproxy?)"))
                } else {
                    check.unchained += 1
                }
                continue
            }
            chainStarted = true
            guard named.lowercased() != expected else { continue }
            let reason: String
            if check.records == 1 {
                reason = "it names a previous record (SHA-256 \(named)) but none precedes it: the records before it were deleted"
            } else {
                reason = "it names SHA-256 \(named), but the line before it hashes to \(expected): that record was edited, "
                    + "or records between them were deleted"
            }
            check.breaks.append(.init(record: check.records, line: index + 1, reason: reason))
        }
        check.lastDigest = Digest.sha256(lastLine(of: bytes)).hex
        return check
    }

    /// The last non-empty line of `bytes` with its newline; empty when there is none.
    static func lastLine(of bytes: [UInt8]) -> [UInt8] {
        guard let line = bytes.split(separator: UInt8(ascii: "\n")).last else { return [] }
        return Array(line) + [UInt8(ascii: "\n")]
    }
}
