import CertAuthority
import Foundation
import Testing
import TestSupport

/// The ledger's hash chain: every record names the SHA-256 of the line before it, and
/// `devproxy ca ledger verify` finds a line edited or deleted.
@Suite struct CALedgerCommandTests {
    let dir = TemporaryDirectory()
    var ca: String { dir.file("ca") }

    func devproxy(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, arguments)
    }

    /// The ledger's lines, without the newlines.
    func lines() -> [String] {
        dir.read("ca/ledger.jsonl").split(separator: "\n").map(String.init)
    }

    /// `previous_sha256` of a ledger line.
    func previous(_ line: String) throws -> String? {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return object?["previous_sha256"] as? String
    }

    /// `openssl dgst -sha256` of a file's bytes, as hex.
    func openSSLDigest(_ path: String) throws -> String {
        let result = try Subprocess.run("openssl", ["dgst", "-sha256", "-r", path])
        #expect(result.status == 0, "\(result.output)")
        return String(result.stdout.prefix(64))
    }

    /// A CA with a root, two intermediates and a revocation: four records.
    func makeLedger() throws {
        #expect(try devproxy(["ca", "init", "--ca-dir", ca]).status == 0)
        #expect(try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "ana@acme.dev"]).status == 0)
        #expect(try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev"]).status == 0)
        let revoked = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "ana@acme.dev", "--reason", "superseded"])
        #expect(revoked.status == 0, "\(revoked.output)")
    }

    /// Each record names `openssl dgst -sha256` of the line before it, newline included (the
    /// first, the digest of nothing), and verify says the ledger is intact.
    @Test func everyRecordNamesTheDigestOfTheLineBeforeIt() throws {
        try makeLedger()
        let lines = lines()
        #expect(lines.count == 4)
        #expect(try previous(lines[0]) == openSSLDigest("/dev/null"))
        for index in 1..<lines.count {
            let prior = dir.write("prior-\(index)", lines[index - 1] + "\n")
            #expect(try previous(lines[index]) == openSSLDigest(prior), "line \(index + 1)")
        }
        let verified = try devproxy(["ca", "ledger", "verify", "--ca-dir", ca])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.stdout.hasPrefix("ledger intact: 4 records"), "\(verified.output)")
        let last = dir.write("last", lines[3] + "\n")
        #expect(verified.stdout.contains(try openSSLDigest(last)), "the last record's digest, to keep elsewhere")
    }

    /// An edited line breaks the record after it; a deleted one, the record that followed it.
    @Test func anEditedOrDeletedRecordIsFound() throws {
        try makeLedger()
        let original = dir.read("ca/ledger.jsonl")
        dir.write("ca/ledger.jsonl", original.replacingOccurrences(of: #""email":"bo@acme.dev""#, with: #""email":"eve@acme.dev""#))
        let edited = try devproxy(["ca", "ledger", "verify", "--ca-dir", ca])
        #expect(edited.status == 1, "\(edited.output)")
        let editedErrors = edited.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(editedErrors.count == 1, "\(edited.output)")
        #expect(editedErrors.first?.hasPrefix("error: ledger record 4 (line 4) does not follow record 3: ") == true, "\(edited.output)")
        #expect(!edited.stdout.contains("ledger intact"))

        var lines = original.split(separator: "\n").map(String.init)
        lines.remove(at: 1)
        dir.write("ca/ledger.jsonl", lines.joined(separator: "\n") + "\n")
        let deleted = try devproxy(["ca", "ledger", "verify", "--ca-dir", ca])
        #expect(deleted.status == 1, "\(deleted.output)")
        #expect(deleted.stderr.contains("error: ledger record 2 (line 2) does not follow record 1: "), "\(deleted.output)")

        dir.write("ca/ledger.jsonl", original.split(separator: "\n").dropFirst().joined(separator: "\n") + "\n")
        let headless = try devproxy(["ca", "ledger", "verify", "--ca-dir", ca])
        #expect(headless.status == 1, "\(headless.output)")
        #expect(headless.stderr.contains("error: ledger record 1 (line 1) "), "\(headless.output)")
    }

    /// A ledger written before records were chained stays readable; the chain starts at the
    /// first record that names its predecessor, and verify counts the unchained ones.
    @Test func aLedgerWithoutDigestsStaysReadableAndTheChainStartsAfterIt() throws {
        try makeLedger()
        let unchained = try lines().map { line in
            var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            object["previous_sha256"] = nil
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }
        dir.write("ca/ledger.jsonl", unchained.joined(separator: "\n") + "\n")
        let listed = try devproxy(["ca", "list", "--ca-dir", ca])
        #expect(listed.status == 0 && listed.stdout.contains("bo@acme.dev"), "\(listed.output)")
        let old = try devproxy(["ca", "ledger", "verify", "--ca-dir", ca])
        #expect(old.status == 0, "\(old.output)")
        #expect(old.stdout.hasPrefix("ledger intact: 4 records"), "\(old.output)")
        #expect(old.stdout.contains("none is chained yet"), "\(old.output)")

        #expect(try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "cy@acme.dev"]).status == 0)
        let chained = lines()
        let prior = dir.write("prior", chained[3] + "\n")
        #expect(try previous(chained[4]) == openSSLDigest(prior))
        let verified = try devproxy(["ca", "ledger", "verify", "--ca-dir", ca])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.stdout.hasPrefix("ledger intact: 5 records"), "\(verified.output)")
        #expect(verified.stdout.contains("4 earlier records are not chained"), "\(verified.output)")

        // A record without a digest after the chain started is one written around devproxy.
        dir.write("ca/ledger.jsonl", dir.read("ca/ledger.jsonl") + unchained[1] + "\n")
        let appended = try devproxy(["ca", "ledger", "verify", "--ca-dir", ca])
        #expect(appended.status == 1, "\(appended.output)")
        #expect(appended.stderr.contains("error: ledger record 6 (line 6) does not follow record 5: it names no previous record"),
                "\(appended.output)")
    }

    @Test func usageAndAMissingLedger() throws {
        let missing = try devproxy(["ca", "ledger", "verify", "--ca-dir", dir.file("none")])
        #expect(missing.status == 1, "\(missing.output)")
        #expect(missing.stderr.hasPrefix("error: "), "\(missing.output)")
        let verb = try devproxy(["ca", "ledger", "check", "--ca-dir", ca])
        #expect(verb.status == 2, "\(verb.output)")
        #expect(verb.stderr.contains("error: unknown command `ca ledger check`"), "\(verb.output)")
    }
}
