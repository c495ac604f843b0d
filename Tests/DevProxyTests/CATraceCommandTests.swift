import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy ca trace` and `ca list` as a security lead reads them after an incident: when and why
/// an intermediate was revoked, whether a certificate was signed after that, and the
/// certificate's own dates, never a ledger line's edited words.
@Suite struct CATraceCommandTests {
    let dir = TemporaryDirectory()
    var ca: String { dir.file("ca") }

    func devproxy(_ arguments: [String]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, arguments)
    }

    /// A CA with bo@acme.dev's intermediate, its bundle at `bo.pem`; returns its serial.
    func issueBo() throws -> String {
        #expect(try devproxy(["ca", "init", "--ca-dir", ca]).status == 0)
        let issued = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--out", dir.file("bo.pem")])
        #expect(issued.status == 0, "\(issued.output)")
        return String(try #require(issued.stdout.split(separator: "\n").first { $0.contains("serial") }?.split(separator: " ").last))
    }

    /// A TLS server certificate for `host` signed with the bundle's key by openssl, as a copy of
    /// the key would sign one (its not-before is now).
    func signWithBundle(_ host: String) throws -> String {
        let bundle = dir.file("bo.pem")
        let intermediate = dir.file("bo-intermediate.pem")
        let extracted = try Subprocess.run("openssl", ["x509", "-in", bundle, "-out", intermediate])
        #expect(extracted.status == 0, "\(extracted.output)")
        let key = dir.file("\(host).key"), csr = dir.file("\(host).csr"), certificate = dir.file("\(host).pem")
        let request = try Subprocess.run("openssl", ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                     "-subj", "/CN=\(host)", "-keyout", key, "-out", csr])
        #expect(request.status == 0, "\(request.output)")
        let ext = dir.write("\(host).ext", "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:\(host)\n")
        let signed = try Subprocess.run("openssl", ["x509", "-req", "-in", csr, "-CA", intermediate, "-CAkey", bundle,
                                                    "-CAcreateserial", "-days", "1", "-extfile", ext, "-out", certificate])
        #expect(signed.status == 0, "\(signed.output)")
        return certificate
    }

    /// A leaf of a revoked intermediate traces to the engineer with the revocation's date and
    /// reason (trace said only "revoked"), and one signed after the revocation says so: the key
    /// is still in use.
    @Test func aRevokedIntermediateIsTracedWithWhenAndWhy() throws {
        let serial = try issueBo()
        let before = try signWithBundle("before.acme.dev")
        let revoked = try devproxy(["ca", "revoke", "--ca-dir", ca, serial, "--reason", "keyCompromise"])
        #expect(revoked.status == 0, "\(revoked.output)")
        // The revocation is recorded to the second; a certificate signed in the next second starts after it.
        Thread.sleep(forTimeInterval: 1.1)
        let after = try signWithBundle("after.acme.dev")

        let listed = try devproxy(["ca", "list", "--ca-dir", ca, "--json"])
        let row = try #require((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.first)
        let revokedAt = try #require(row["revoked_at"] as? String, "\(listed.output)")
        let when = try #require(ISO8601DateFormatter().date(from: revokedAt))
        #expect(abs(when.timeIntervalSinceNow) < 60, "\(revokedAt)")
        #expect(row["revocation_reason"] as? String == "keyCompromise")

        let text = try devproxy(["ca", "trace", "--ca-dir", ca, after])
        #expect(text.status == 0, "\(text.output)")
        #expect(text.stdout.contains("was issued by the intermediate of bo@acme.dev"), "\(text.output)")
        #expect(text.stdout.contains("serial \(serial), revoked \(revokedAt.prefix(10)) \(revokedAt.dropFirst(11).prefix(5)) UTC "
                                     + "(keyCompromise), valid"), "\(text.output)")
        #expect(text.stdout.contains("signed after that revocation"), "\(text.output)")

        for (certificate, signedAfter) in [(after, true), (before, false)] {
            let traced = try devproxy(["ca", "trace", "--ca-dir", ca, certificate, "--json"])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(traced.stdout.utf8)) as? [String: Any])
            let finding = try #require((object["findings"] as? [[String: Any]])?.first, "\(traced.output)")
            #expect(finding["relation"] as? String == "issued_by_intermediate")
            #expect(finding["revoked_at"] as? String == revokedAt, "\(traced.output)")
            #expect(finding["revocation_reason"] as? String == "keyCompromise", "\(traced.output)")
            #expect(finding["signed_after_revocation"] as? Bool == signedAfter, "\(certificate): \(traced.output)")
        }
        let earlier = try devproxy(["ca", "trace", "--ca-dir", ca, before])
        #expect(!earlier.stdout.contains("signed after"), "\(earlier.output)")
    }

    /// A ledger line whose not_after was edited (a longer life) does not change what `list --json`
    /// and `trace --json` print: the certificate's date, as the text table already showed, with
    /// a warning naming the line. They printed the edited date.
    @Test func anEditedDateInTheLedgerIsTheCertificates() throws {
        let serial = try issueBo()
        let ledger = dir.file("ca/ledger.jsonl")
        var lines = try String(contentsOfFile: ledger, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(lines.firstIndex { $0.contains("\"type\":\"intermediate\"") })
        let actual = try #require(lines[index].firstMatch(of: /"not_after":"([^"]+)"/)?.output.1)
        let real = String(actual)
        lines[index] = Substring(lines[index].replacingOccurrences(of: "\"not_after\":\"\(real)\"",
                                                                   with: "\"not_after\":\"2099-01-01T00:00:00Z\""))
        try lines.joined(separator: "\n").write(toFile: ledger, atomically: true, encoding: .utf8)

        let listed = try devproxy(["ca", "list", "--ca-dir", ca, "--json"])
        let row = try #require((try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]])?.first)
        #expect(row["not_after"] as? String == real, "\(listed.output)")
        #expect(listed.stderr.contains("warning: \(ledger) line \(index + 1): intermediate \(serial) names not_after "
                                       + "2099-01-01T00:00:00Z, but its certificate (signed by the root) says \(real)"),
                "\(listed.output)")
        let traced = try devproxy(["ca", "trace", "--ca-dir", ca, dir.file("bo.pem"), "--json"])
        #expect(traced.stdout.contains("\"not_after\" : \"\(real)\""), "\(traced.output)")
        #expect(!traced.stdout.contains("2099"), "\(traced.output)")
    }
}
