import CertAuthority
import Foundation
import Testing
import TestSupport

/// `devproxy ca …` and `devproxy pins` as a user runs them: output, files, exit codes, and
/// one `error:` line for every bad input.
@Suite struct CACommandTests {
    let dir = TemporaryDirectory()
    var ca: String { dir.file("ca") }

    func devproxy(_ arguments: [String], environment: [String: String] = [:]) throws -> Subprocess.Result {
        try Subprocess.run(Subprocess.devproxy, arguments, environment: environment)
    }

    /// The single `error:` line of a failed command.
    func errorLine(_ result: Subprocess.Result) -> String {
        result.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }.joined(separator: "\n")
    }

    @Test func initIssueListRevokeTraceExportRoundTrip() throws {
        let created = try devproxy(["ca", "init", "--ca-dir", ca, "--name", "Acme Dev Root"])
        #expect(created.status == 0, "\(created.output)")
        #expect(created.stdout.contains("SPKI pin     sha256/"))
        #expect(created.stdout.contains("Next:"))
        let issued = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "ana@acme.dev", "--days", "3", "--permit-dns", "acme.dev"])
        #expect(issued.status == 0, "\(issued.output)")
        let serial = try #require(issued.stdout.split(separator: "\n").first { $0.contains("serial") }?.split(separator: " ").last)
        let listed = try devproxy(["ca", "list", "--ca-dir", ca, "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 1)
        #expect(rows?.first?["email"] as? String == "ana@acme.dev")
        #expect(rows?.first?["status"] as? String == "active")
        #expect(rows?.first?["serial"] as? String == String(serial))
        #expect((rows?.first?["spki_pin"] as? String)?.hasPrefix("sha256/") == true)
        #expect(rows?.first?["not_before"] != nil && rows?.first?["not_after"] != nil)

        let bundle = try #require(FileManager.default.contentsOfDirectory(atPath: ca + "/intermediates").first)
        let traced = try devproxy(["ca", "trace", "--ca-dir", ca, ca + "/intermediates/" + bundle, "--json"])
        #expect(traced.status == 0, "\(traced.output)")
        #expect(traced.stdout.contains("\"email\" : \"ana@acme.dev\""))

        let revoked = try devproxy(["ca", "revoke", "--ca-dir", ca, String(serial), "--reason", "key-compromise"])
        #expect(revoked.status == 0, "\(revoked.output)")
        #expect(FileManager.default.fileExists(atPath: ca + "/crl.pem"))
        let afterRevoke = try devproxy(["ca", "list", "--ca-dir", ca])
        #expect(afterRevoke.stdout.contains("revoked"))

        let export = try devproxy(["ca", "export", "--ca-dir", ca, "--format", "der", "--out", dir.file("root.crt")])
        #expect(export.status == 0)
        let der = try Subprocess.run("openssl", ["x509", "-inform", "DER", "-in", dir.file("root.crt"), "-noout", "-subject"])
        #expect(der.stdout.contains("Acme Dev Root"))
        let pem = try devproxy(["ca", "export", "--ca-dir", ca])
        #expect(pem.stdout.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let fromBundle = try devproxy(["ca", "export", "--bundle", ca + "/intermediates/" + bundle, "--format", "der", "--out", dir.file("from-bundle.crt")])
        #expect(fromBundle.status == 0, "\(fromBundle.output)")
        #expect(FileManager.default.contents(atPath: dir.file("from-bundle.crt")) == FileManager.default.contents(atPath: dir.file("root.crt")))
    }

    /// An intermediate asked to outlive its root ends with the root, and `ca issue` says so with
    /// the rotation that fixes it (`openssl x509 -enddate` shows the two ends equal); it was silent.
    @Test func anIntermediateCutShortByItsRootIsAWarning() throws {
        #expect(try devproxy(["ca", "init", "--ca-dir", ca, "--days", "3"]).status == 0)
        let bundle = dir.file("ana.pem")
        let issued = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "ana@acme.dev", "--days", "7", "--out", bundle])
        #expect(issued.status == 0, "\(issued.output)")
        let intermediateEnd = try Subprocess.run("openssl", ["x509", "-in", bundle, "-noout", "-enddate"]).stdout
        let rootEnd = try Subprocess.run("openssl", ["x509", "-in", ca + "/root.pem", "-noout", "-enddate"]).stdout
        #expect(intermediateEnd == rootEnd, "\(intermediateEnd) \(rootEnd)")
        let warning = errorLine(issued).isEmpty ? issued.stderr : ""
        #expect(warning.contains("warning: the root ends on ") && warning.contains(" h short of the 7 day(s) asked; make the next "
                                                                                  + "root now (`devproxy ca init --next`"),
                "\(issued.output)")
        let fits = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--days", "1"])
        #expect(fits.status == 0 && !fits.stderr.contains("the root ends"), "\(fits.output)")
    }

    /// An option that takes one value, given twice, takes the last (as curl and argparse do), so
    /// an alias or a script's defaults can be overridden by appending; a repeatable one keeps
    /// every value. The same `--email` twice is one engineer; two different ones stay an error
    /// (`badInputEndsInOneErrorLine`).
    @Test func theLastOfAnOptionGivenTwiceWins() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let issued = try devproxy(["ca", "issue", "--ca-dir", dir.file("elsewhere"), "--email", "c@d.co", "--days", "30",
                                   "--permit-dns", "acme.dev", "--permit-dns", "acme.test", "--days", "3",
                                   "--email", "c@d.co", "--ca-dir", ca])
        #expect(issued.status == 0, "\(issued.output)")
        #expect(issued.stdout.contains("Issued an intermediate CA for c@d.co"), "\(issued.stdout)")
        #expect(issued.stdout.contains("may sign     acme.dev, acme.test"), "\(issued.stdout)")
        let rows = try JSONSerialization.jsonObject(with: Data(try devproxy(["ca", "list", "--ca-dir", ca, "--json"]).stdout.utf8))
            as? [[String: Any]]
        #expect(rows?.map { $0["email"] as? String } == ["c@d.co"])
        let notBefore = try #require(ISO8601DateFormatter().date(from: rows?.first?["not_before"] as? String ?? ""))
        let notAfter = try #require(ISO8601DateFormatter().date(from: rows?.first?["not_after"] as? String ?? ""))
        #expect(abs(notAfter.timeIntervalSince(notBefore) - 3 * 86_400) < 7_200, "\(notBefore) \(notAfter)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("elsewhere")))
    }

    /// `ca export --format der --out /dev/stdout > root.crt`: the DER lands in the file whole
    /// (openssl reads it), the note goes to stderr, and `/dev/stdout` stays a link. The atomic
    /// write renamed a file over the path (as root, /dev/stdout became a regular file), and a
    /// second open of it wrote from offset 0 under what the process printed there.
    /// The follow-up commands `ca init` and `ca init --next` print name the CA directory they were
    /// given: copied as printed without it, `ca export` wrote the local development root, and
    /// `ca issue` issued from it, with exit 0.
    @Test func printedNextCommandsNameTheCADirectory() throws {
        let spaced = dir.file("team ca")
        let made = try devproxy(["ca", "init", "--ca-dir", spaced])
        #expect(made.stdout.contains("devproxy ca issue --ca-dir '\(spaced)' --email"), "\(made.stdout)")
        #expect(made.stdout.contains("devproxy ca export --ca-dir '\(spaced)' --format der"), "\(made.stdout)")
        let next = try devproxy(["ca", "init", "--next", "--ca-dir", spaced])
        #expect(next.stdout.contains("devproxy ca rotate --ca-dir '\(spaced)'"), "\(next.stdout)")
        let plain = try devproxy(["ca", "init", "--ca-dir", ca])
        #expect(plain.stdout.contains("devproxy ca export --ca-dir \(ca) --format der"), "\(plain.stdout)")
    }

    /// `--email` with `--reason superseded` while the engineer holds two active intermediates is
    /// refused, naming the old serial: it revoked the new one too, leaving none.
    @Test func supersededByEmailKeepsTheNewIntermediate() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--out", dir.file("bo1.pem")])
        let first = try #require(try CAStore(directory: ca).intermediates().entries.last?.serial)
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--out", dir.file("bo2.pem")])
        let refused = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "bo@acme.dev", "--reason", "superseded"])
        #expect(refused.status == 1 && errorLine(refused).contains("devproxy ca revoke --ca-dir \(ca) \(first) --reason superseded"),
                "\(refused.output)")
        #expect(try CAStore(directory: ca).intermediates().entries.allSatisfy { $0.status == .active })
    }

    /// A file that is not what its option takes is named in the error with its option: "the
    /// certificate is not valid DER: too small" and "no PEM private key found" said neither.
    @Test func aWrongFileIsNamedWithItsOption() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let key = dir.write("key.pem", bytes: try PrivateKey.generate(.p256).pem())
        let cases: [([String], String)] = [
            (["ca", "trace", "--ca-dir", ca, key], "\(key): "),
            (["ca", "export", "--bundle", key], "--bundle \(key): "),
            (["run", "--ca-dir", ca, "--upstream-ca", key, "--listen", "127.0.0.1:0"], "--upstream-ca \(key): "),
            (["run", "--ca-dir", ca, "--intermediate", "\(ca)/root.pem", "--listen", "127.0.0.1:0"],
             "--intermediate \(ca)/root.pem: "),
        ]
        for (arguments, expected) in cases {
            let result = try devproxy(arguments)
            #expect(result.status != 0 && errorLine(result).hasPrefix("error: " + expected), "\(arguments): \(result.output)")
        }
    }

    @Test func exportToStandardOutputWritesTheBytesThere() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca, "--name", "Acme Dev Root"])
        let file = dir.file("root.crt")
        let script = "\"$0\" ca export --ca-dir \"$1\" --format der --out /dev/stdout > \"$2\""
        let export = try Subprocess.run("bash", ["-c", script, Subprocess.devproxy, ca, file])
        #expect(export.status == 0, "\(export.output)")
        #expect(export.stderr.hasPrefix("Wrote the root certificate (DER) to /dev/stdout."), "\(export.stderr)")
        let subject = try Subprocess.run("openssl", ["x509", "-inform", "der", "-in", file, "-noout", "-subject"])
        #expect(subject.stdout.contains("CN = Acme Dev Root"), "\(subject.output)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/dev/stdout")) != nil)
    }

    @Test func traceOfAForeignCertificateExitsOne() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let other = dir.file("other")
        _ = try devproxy(["ca", "init", "--ca-dir", other])
        let result = try devproxy(["ca", "trace", "--ca-dir", ca, other + "/root.pem"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("Not issued by this CA"))
    }

    /// An intermediate whose ledger line is lost is not "team-shared signing" by the root (exit
    /// 0, no warning, as it was): it is a CA nobody recorded, said so with the ledger's problem,
    /// and exit 1.
    @Test func traceOfAnIntermediateTheLedgerLostSaysSo() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let issued = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--out", dir.file("bo.pem")])
        #expect(issued.status == 0, "\(issued.output)")
        let intermediate = try #require(try Certificate.all(from: Array(dir.read("bo.pem").utf8)).first)
        let chain = dir.write("bo-int.pem", intermediate.pem)
        var lines = dir.read("ca/ledger.jsonl").split(separator: "\n", omittingEmptySubsequences: false)
        lines[1] = "{corrupt"
        dir.write("ca/ledger.jsonl", lines.joined(separator: "\n"))
        let traced = try devproxy(["ca", "trace", "--ca-dir", ca, chain])
        #expect(traced.status == 1, "\(traced.output)")
        #expect(traced.stdout.contains("a CA certificate signed by this CA's root that the ledger does not record"), "\(traced.output)")
        #expect(traced.stdout.contains("serial \(intermediate.serialHex), email bo@acme.dev"))
        #expect(!traced.stdout.contains("team-shared"))
        #expect(traced.stderr.contains("warning: \(ca)/ledger.jsonl line 2"), "\(traced.stderr)")
        let json = try devproxy(["ca", "trace", "--ca-dir", ca, chain, "--json"])
        #expect(json.status == 1 && json.stdout.contains("\"relation\" : \"unrecorded_ca\""), "\(json.output)")
    }

    /// A CA the root signed that the ledger does not record can be revoked from its certificate
    /// (`--cert`, as `openssl ca -revoke` takes any certificate its CA signed): `trace` suggested a
    /// `ca revoke SERIAL` that then failed, "no intermediate with serial …".
    @Test func anUnrecordedCAIsRevokedFromItsCertificate() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--out", dir.file("bo.pem")])
        let intermediate = try #require(try Certificate.all(from: Array(dir.read("bo.pem").utf8)).first)
        let chain = dir.write("bo-int.pem", intermediate.pem)
        let lines = dir.read("ca/ledger.jsonl").split(separator: "\n")
        _ = dir.write("ca/ledger.jsonl", lines.filter { !$0.contains(intermediate.serialHex) }.joined(separator: "\n") + "\n")
        let traced = try devproxy(["ca", "trace", "--ca-dir", ca, chain])
        #expect(traced.stdout.contains("devproxy ca revoke --ca-dir \(ca) --cert FILE"), "\(traced.output)")
        #expect(try devproxy(["ca", "revoke", "--ca-dir", ca, intermediate.serialHex]).status == 1)
        let revoked = try devproxy(["ca", "revoke", "--ca-dir", ca, "--cert", chain, "--reason", "keyCompromise"])
        #expect(revoked.status == 0, "\(revoked.output)")
        #expect(revoked.stdout.contains("Revoked \(intermediate.subject), serial \(intermediate.serialHex) (keyCompromise)"),
                "\(revoked.output)")
        let verify = try Subprocess.run("openssl", ["verify", "-crl_check", "-CRLfile", dir.file("ca/crl.pem"),
                                                    "-CAfile", dir.file("ca/root.pem"), chain])
        #expect(verify.status != 0 && verify.output.contains("certificate revoked"), "\(verify.output)")
        let other = dir.file("other")
        _ = try devproxy(["ca", "init", "--ca-dir", other])
        let foreign = try devproxy(["ca", "revoke", "--ca-dir", ca, "--cert", other + "/root.pem"])
        #expect(foreign.status == 1 && errorLine(foreign).contains("was not signed by a root of this CA"), "\(foreign.output)")
    }

    /// Every CRL write has a higher cRLNumber (RFC 5280 §5.2.3; a repeated revoke re-signed with
    /// the same one), `ca crl` re-signs before nextUpdate, and after `ca rotate` the retired root
    /// signs a CRL too: an intermediate it issued, revoked then, showed OK under `-crl_check`
    /// against the root devices still trust ("unable to get certificate CRL" at best).
    @Test func crlNumbersRiseAndTheRetiredRootSignsItsOwn() throws {
        func number() throws -> String {
            try Subprocess.run("openssl", ["crl", "-in", dir.file("ca/crl.pem"), "-noout", "-crlnumber"]).stdout
        }
        func intermediate(_ bundle: String) throws -> String {
            let certificate = try #require(try Certificate.all(from: Array(dir.read(bundle).utf8)).first)
            return dir.write(bundle + "-int.pem", certificate.pem)
        }
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@acme.dev", "--out", dir.file("a.pem")])
        _ = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "a@acme.dev"])
        #expect(try number() == "crlNumber=0x02\n")
        let again = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "a@acme.dev"])
        #expect(again.stdout.hasPrefix("Already revoked; nothing new to record.\nWrote \(ca)/crl.pem (1 revoked, CRL number 3)."),
                "\(again.output)")
        let refreshed = try devproxy(["ca", "crl", "--ca-dir", ca])
        #expect(refreshed.status == 0 && refreshed.stdout.contains("CRL number 4"), "\(refreshed.output)")
        #expect(refreshed.stdout.contains("re-sign it before then with `devproxy ca crl --ca-dir \(ca)`"))
        let oldRoot = dir.write("old-root.pem", dir.read("ca/root.pem"))
        _ = try devproxy(["ca", "init", "--next", "--ca-dir", ca])
        let rotated = try devproxy(["ca", "rotate", "--ca-dir", ca])
        #expect(rotated.status == 0, "\(rotated.output)")
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "b@acme.dev", "--out", dir.file("b.pem")])
        let revoked = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "b@acme.dev"])
        #expect(revoked.stdout.contains("(2 revoked, CRL number 6; also signed by the retired root DevProxy Team Root)"),
                "\(revoked.output)")
        let cases = [(oldRoot, try intermediate("a.pem"), [String]()), (dir.file("ca/root.pem"), try intermediate("b.pem"), []),
                     (oldRoot, try intermediate("b.pem"), ["-untrusted", dir.file("ca/cross.pem")])]
        for (root, certificate, extra) in cases {
            let verify = try Subprocess.run("openssl", ["verify", "-crl_check", "-CRLfile", dir.file("ca/crl.pem"),
                                                        "-CAfile", root] + extra + [certificate])
            #expect(verify.status != 0 && verify.output.contains("certificate revoked"), "\(certificate): \(verify.output)")
        }
    }

    /// Ledger records are believed only as far as the certificates they hold, which the root
    /// signed: an email edited in bo's record made `ca trace` name carol, and a record holding a
    /// CA the root never signed was listed as active and traced to a person.
    @Test func theLedgerIsReadThroughItsCertificates() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--out", dir.file("bo.pem")])
        let ledger = dir.read("ca/ledger.jsonl")
        _ = dir.write("ca/ledger.jsonl", ledger.replacingOccurrences(of: #""email":"bo@acme.dev""#, with: #""email":"carol@acme.dev""#))
        let intermediate = try #require(try Certificate.all(from: Array(dir.read("bo.pem").utf8)).first)
        let traced = try devproxy(["ca", "trace", "--ca-dir", ca, "--json", dir.write("bo-int.pem", intermediate.pem)])
        #expect(traced.stdout.contains(#""email" : "bo@acme.dev""#) && !traced.stdout.contains("carol"), "\(traced.output)")
        #expect(traced.stderr.contains("names carol@acme.dev, but its certificate (signed by the root) names bo@acme.dev"),
                "\(traced.stderr)")
        // A CA the root never signed, recorded as carol's intermediate.
        let key = dir.file("forged.key")
        let made = try Subprocess.run("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                  "-keyout", key, "-out", dir.file("forged.pem"), "-days", "7", "-subj",
                                                  "/CN=DevProxy Intermediate carol@acme.dev/emailAddress=carol@acme.dev",
                                                  "-addext", "basicConstraints=critical,CA:TRUE"])
        #expect(made.status == 0, "\(made.output)")
        let forged = try #require(try Certificate.all(from: Array(dir.read("forged.pem").utf8)).first)
        let record: [String: Any] = ["type": "intermediate", "serial": forged.serialHex, "email": "carol@acme.dev",
                                     "certificate": forged.pem, "issued_at": "2026-12-01T00:00:00Z",
                                     "not_before": "2026-12-01T00:00:00Z", "not_after": "2099-01-01T00:00:00Z"]
        let line = String(decoding: try JSONSerialization.data(withJSONObject: record), as: UTF8.self)
        _ = dir.write("ca/ledger.jsonl", dir.read("ca/ledger.jsonl") + line + "\n")
        let listed = try devproxy(["ca", "list", "--ca-dir", ca])
        #expect(!listed.stdout.contains("carol@acme.dev"), "\(listed.stdout)")
        #expect(listed.stderr.contains("holds a certificate no root of this CA signed"), "\(listed.stderr)")
        let forgedTrace = try devproxy(["ca", "trace", "--ca-dir", ca, dir.file("forged.pem")])
        #expect(forgedTrace.status == 1, "\(forgedTrace.output)")
        #expect(!forgedTrace.stdout.contains("carol@acme.dev is"), "\(forgedTrace.output)")
    }

    /// Another CA's root and key put into the directory (a mixed-up restore) are refused before
    /// anything is signed: `issue` went on under the other root, and revocations went out signed
    /// by it, which no device trusting the real root could check.
    @Test func aRootTheLedgerDoesNotRecordIsRefused() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "init", "--ca-dir", dir.file("other"), "--name", "Other Root"])
        for name in ["root.pem", "root.key"] {
            _ = dir.write("ca/" + name, dir.read("other/" + name))
        }
        let issued = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev"])
        #expect(issued.status == 1)
        #expect(errorLine(issued).contains("is not a root \(ca)/ledger.jsonl records: another CA's root and key were put here"),
                "\(issued.output)")
        #expect(try devproxy(["ca", "crl", "--ca-dir", ca]).status == 1)
    }

    /// A root key other users can read is said on every use (it signs for whoever reads it).
    @Test func aRootKeyOthersCanReadIsSaid() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        #expect(!(try devproxy(["ca", "list", "--ca-dir", ca]).stderr.contains("may be read by other users")))
        chmod(ca + "/root.key", 0o644)
        let listed = try devproxy(["ca", "list", "--ca-dir", ca])
        #expect(listed.stderr.contains("warning: the root key \(ca)/root.key may be read by other users (mode 644): "
                                       + "`chmod 600 \(ca)/root.key`"), "\(listed.stderr)")
    }

    /// A hold (certificateHold) can become a revocation for good: the CRL then carries the later
    /// reason, once. It was "Already revoked", the hold for ever.
    @Test func aHoldCanBecomeAKeyCompromise() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev"])
        let held = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "bo@acme.dev", "--reason", "certificateHold"])
        #expect(held.status == 0, "\(held.output)")
        let again = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "bo@acme.dev", "--reason", "certificateHold"])
        #expect(again.stdout.contains("Already revoked"), "\(again.output)")
        let escalated = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "bo@acme.dev", "--reason", "keyCompromise"])
        #expect(escalated.stdout.contains("(keyCompromise)") && escalated.stdout.contains("(1 revoked,"), "\(escalated.output)")
        let text = try Subprocess.run("openssl", ["crl", "-in", dir.file("ca/crl.pem"), "-noout", "-text"]).stdout
        #expect(text.contains("Key Compromise") && !text.contains("Certificate Hold"), "\(text)")
    }

    /// A full disk never leaves a torn ledger line: a short write is cut back and the command
    /// fails with ENOSPC's own reason; the next commands work. (A torn line made every later
    /// command refuse until the ledger was edited by hand, and the error named a stale errno.)
    /// Tiny tmpfs mounts in a private mount namespace, each filled by `ca issue` until it fails.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"),
                   "needs root for a private mount namespace"))
    func aFullDiskLeavesNoTornLedgerLine() throws {
        let script = """
            set -u
            for size in 12 14 16 18 20 22 24 26 28; do
              mkdir -p "$1/fs$size" && mount -t tmpfs -o size=${size}k tmpfs "$1/fs$size" || exit 3
              "$0" ca init --ca-dir "$1/fs$size/ca" >/dev/null 2>&1
              i=0
              while [ $i -lt 30 ]; do
                "$0" ca issue --ca-dir "$1/fs$size/ca" --email "e$i@acme.dev" >/dev/null 2>"$1/err$size" || break
                i=$((i+1))
              done
              "$0" ca list --ca-dir "$1/fs$size/ca" >/dev/null 2>"$1/list$size" || { echo "size ${size}k: list failed: $(cat "$1/list$size")"; }
              grep -l "No such file" "$1/err$size" >/dev/null && echo "size ${size}k: stale errno: $(cat "$1/err$size")"
              umount "$1/fs$size"
            done
            echo done
            """
        let dir = TemporaryDirectory()
        let result = try Subprocess.run("unshare", ["-m", "sh", "-c", script, Subprocess.devproxy, dir.path], timeout: 120)
        #expect(result.stdout == "done\n", "\(result.output)")
    }

    /// A lost crl.pem does not restart the CRL numbers below ones relying parties have already seen
    /// (RFC 5280 §5.2.3: monotonically increasing): the last is remembered in `crlnumber`. It
    /// restarted at the ledger's revocations + 1.
    @Test func aLostCRLDoesNotRestartItsNumbers() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        for _ in 0..<3 { _ = try devproxy(["ca", "crl", "--ca-dir", ca]) }
        let third = try Subprocess.run("openssl", ["crl", "-in", dir.file("ca/crl.pem"), "-noout", "-crlnumber"])
        #expect(third.stdout.contains("crlNumber=0x03"), "\(third.output)")
        try FileManager.default.removeItem(atPath: dir.file("ca/crl.pem"))
        let again = try devproxy(["ca", "crl", "--ca-dir", ca])
        #expect(again.status == 0 && again.stdout.contains("(0 revoked, CRL number 4)"), "\(again.output)")
        let fourth = try Subprocess.run("openssl", ["crl", "-in", dir.file("ca/crl.pem"), "-noout", "-crlnumber"])
        #expect(fourth.stdout.contains("crlNumber=0x04"), "\(fourth.output)")
    }

    /// A revocation the ledger lost (a torn write, a restored backup, a line removed on the tool's
    /// own advice) stays on the CRL, with a warning: `ca crl` re-signed from the ledger alone, and
    /// an intermediate revoked for keyCompromise passed `openssl verify -crl_check` again.
    @Test func aRevocationTheLedgerLostStaysOnTheCRL() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "bo@acme.dev", "--out", dir.file("bo.pem")])
        let revoked = try devproxy(["ca", "revoke", "--ca-dir", ca, "--email", "bo@acme.dev", "--reason", "keyCompromise"])
        #expect(revoked.status == 0, "\(revoked.output)")
        let lines = dir.read("ca/ledger.jsonl").split(separator: "\n")
        _ = dir.write("ca/ledger.jsonl", lines.dropLast().joined(separator: "\n") + "\n")
        let refreshed = try devproxy(["ca", "crl", "--ca-dir", ca])
        #expect(refreshed.status == 0, "\(refreshed.output)")
        #expect(refreshed.stdout.contains("(1 revoked, CRL number 3)"), "\(refreshed.output)")
        #expect(refreshed.stderr.contains("no longer records as revoked (a lost or edited line): it stays on the CRL"),
                "\(refreshed.output)")
        let certificate = try #require(try Certificate.all(from: Array(dir.read("bo.pem").utf8)).first)
        let verify = try Subprocess.run("openssl", ["verify", "-crl_check", "-CRLfile", dir.file("ca/crl.pem"), "-CAfile",
                                                    dir.file("ca/root.pem"), dir.write("bo-int.pem", certificate.pem)])
        #expect(verify.status != 0 && verify.output.contains("certificate revoked"), "\(verify.output)")
        let reason = try Subprocess.run("openssl", ["crl", "-in", dir.file("ca/crl.pem"), "-noout", "-text"])
        #expect(reason.stdout.contains("Key Compromise"), "\(reason.stdout)")
    }

    @Test func passphraseComesFromAFileOrTheEnvironmentNeverArgv() throws {
        let passFile = dir.write("pass", "s3cret passphrase\n")
        let created = try devproxy(["ca", "init", "--ca-dir", ca, "--passphrase-file", passFile])
        #expect(created.status == 0, "\(created.output)")
        #expect(!created.output.contains("s3cret"))
        #expect(created.stdout.contains("encrypted with AES-256"))
        let noPass = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co"])
        #expect(noPass.status == 1)
        #expect(errorLine(noPass).contains("passphrase"))
        let wrong = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co"], environment: ["DEVPROXY_CA_PASSPHRASE": "nope"])
        #expect(wrong.status == 1)
        #expect(errorLine(wrong) == "error: wrong passphrase for the encrypted key")
        let viaEnv = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co"], environment: ["DEVPROXY_CA_PASSPHRASE": "s3cret passphrase"])
        #expect(viaEnv.status == 0, "\(viaEnv.output)")
        #expect(!viaEnv.output.contains("s3cret"))
        let argv = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co", "--passphrase", "s3cret passphrase"])
        #expect(argv.status == 2)
        #expect(errorLine(argv).contains("never taken as arguments"))
        #expect(!argv.output.contains("s3cret"))
    }

    /// A passphrase from a pipe, as a password manager hands it over (`<(pass show ca)`,
    /// `/dev/stdin`): Foundation's whole-file read returned nothing for a pipe, so the command
    /// said "cannot read the passphrase file at /dev/fd/63: permission denied".
    @Test func aPassphraseFileMayBeAPipe() throws {
        let created = try Subprocess.run(Subprocess.devproxy, ["ca", "init", "--ca-dir", ca, "--passphrase-file", "/dev/stdin"],
                                         stdin: Array("s3cret pipe\n".utf8))
        #expect(created.status == 0, "\(created.output)")
        let script = "\"$0\" ca issue --ca-dir \"$1\" --email a@b.co --passphrase-file <(printf 's3cret pipe')"
        let issued = try Subprocess.run("/bin/bash", ["-c", script, Subprocess.devproxy, ca])
        #expect(issued.status == 0, "\(issued.output)")
        #expect(issued.stdout.contains("Issued an intermediate CA for a@b.co"))
        let policy = try Subprocess.run(Subprocess.devproxy, ["policy", "check", "/dev/stdin"], stdin: Array("{}".utf8))
        #expect(policy.stdout.contains("TrustKit was initialized with no pinned domains"), "\(policy.output)")
        let directory = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co", "--passphrase-file", dir.path])
        #expect(errorLine(directory) == "error: cannot read the passphrase file at \(dir.path): it is a directory")
    }

    /// A passphrase file saved with Windows line endings reads as the passphrase without them:
    /// the CR LF went with the passphrase's last character, so the key was encrypted with "s3cre"
    /// and the passphrase itself was refused.
    @Test func aPassphraseFileEndingInCRLFKeepsItsLastCharacter() throws {
        let passFile = dir.write("pass-crlf", "s3cret\r\n")
        let created = try devproxy(["ca", "init", "--ca-dir", ca, "--passphrase-file", passFile])
        #expect(created.status == 0, "\(created.output)")
        let viaEnv = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co"], environment: ["DEVPROXY_CA_PASSPHRASE": "s3cret"])
        #expect(viaEnv.status == 0, "\(viaEnv.output)")
        #expect(try PassphraseSource.file("\(passFile)").read() == "s3cret")
        #expect(try PassphraseSource.file(dir.write("pass-lf", "s3cret\n")).read() == "s3cret")
        #expect(try PassphraseSource.file(dir.write("pass-bare", "s3cret")).read() == "s3cret")
    }

    /// A passphrase file's first line is the passphrase, as OpenSSL's `-passin file:` reads it and
    /// as `pass` keeps a password above its notes: the whole text was used, so `pass show` output
    /// made a key neither OpenSSL nor the password opened. An empty DEVPROXY_CA_PASSPHRASE (a
    /// failed `$(pass show …)`) is refused: it made an unencrypted root without a word.
    @Test func aPassphraseIsAFilesFirstLineAndNeverAnEmptyVariable() throws {
        let passFile = dir.write("pass-entry", "s3cret-line\nlogin: lead@acme.dev\nurl: https://ca.acme.dev\n")
        let created = try devproxy(["ca", "init", "--ca-dir", ca, "--passphrase-file", passFile])
        #expect(created.status == 0, "\(created.output)")
        let opened = try Subprocess.run("openssl", ["pkey", "-in", ca + "/root.key", "-passin", "file:" + passFile, "-noout"])
        #expect(opened.status == 0, "\(opened.output)")
        let viaEnv = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co"],
                                  environment: ["DEVPROXY_CA_PASSPHRASE": "s3cret-line"])
        #expect(viaEnv.status == 0, "\(viaEnv.output)")
        #expect(errorLine(try devproxy(["ca", "init", "--ca-dir", dir.file("other")], environment: ["DEVPROXY_CA_PASSPHRASE": ""]))
                == "error: DEVPROXY_CA_PASSPHRASE is set but empty: give the passphrase in it, or unset it")
        #expect(!FileManager.default.fileExists(atPath: dir.file("other") + "/root.key"))
        #expect(throws: (any Error).self) { try PassphraseSource.file(dir.write("pass-blank-first", "\nsecond\n")).read() }
    }

    @Test(arguments: [
        (["ca", "issue", "--email", "not-an-email"], "is not an email address"),
        (["ca", "issue", "--email", "a@b.co", "--days", "0"], "positive"),
        (["ca", "issue", "--email", "a@b.co", "--days", "-3"], "positive"),
        (["ca", "issue", "--email", "a@b.co", "--days", "120"], "more than 90"),
        (["ca", "issue", "--email", "a@b.co", "--key", "dsa"], "is not one of"),
        (["ca", "issue"], "--email is required"),
        (["ca", "init"], "already exists"),
        (["ca", "revoke", "ffff"], "no intermediate with serial ffff"),
        (["ca", "frobnicate"], "unknown command"),
        (["ca", "list", "--bogus"], "unknown option --bogus"),
        // `/` made the default bundle path leave the CA directory (`intermediates/../../x@…`).
        (["ca", "issue", "--email", "../../x@acme.dev"], "it contains \"/\""),
        (["ca", "issue", "--email", "ana\n@acme.dev"], "control character U+A"),
        (["ca", "issue", "--email", "anä@acme.dev"], "non-ASCII"),
        (["ca", "issue", "--email", String(repeating: "a", count: 65) + "@acme.dev"], "longer than 64"),
        (["ca", "issue", "--email", "ana@-acme.dev"], "not a host name"),
        (["ca", "revoke", "ffff", "--reason", "removeFromCRL"], "would leave the intermediate valid"),
        (["ca", "init", "--days", "3000000"], "from 1 to 36500"),
        (["ca", "init", "--days", "9223372036854775807"], "from 1 to 36500"),
        // Two engineers for one intermediate: the ledger would trace it to the last one typed.
        (["ca", "issue", "--email", "a@b.co", "--email", "c@d.co"], "--email was given twice (a@b.co and c@d.co)"),
        // An option where a value goes: the certificate was written to a file named `--ca-dir`.
        (["ca", "export", "-out"], "-out needs a value, and got the option --ca-dir"),
        // Every mode with an address of its own: the explicit --listen listened nowhere, silently.
        (["run", "--listen", "127.0.0.1:0", "--mode", "socks5@127.0.0.1:0"], "is not used: every --mode has an address"),
        // A port where the address goes: accepted, and every request to the host was a 502.
        (["run", "--resolve", "a.test:443:127.0.0.1:8443"], "127.0.0.1:8443 is not an IP address or host name"),
    ])
    func badInputEndsInOneErrorLine(_ arguments: [String], _ expected: String) throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let result = try devproxy(arguments + ["--ca-dir", ca])
        #expect(result.status != 0)
        let line = errorLine(result)
        #expect(line.contains(expected), "\(result.output)")
        #expect(line.split(separator: "\n").count == 1)
    }

    /// Random bytes as a passphrase file were read as UTF-8 with each invalid byte made U+FFFD:
    /// another file with the same valid bytes opened the key, and OpenSSL could not open it with
    /// the file that encrypted it. Such a file is refused, naming how to make a text one.
    @Test func aBinaryPassphraseFileIsRefused() throws {
        let binary = dir.write("binary.pass", bytes: [0x41, 0xFF, 0xFE, 0xFD, 0xFC])
        let withNUL = dir.write("nul.pass", bytes: Array("s3cret\u{0}more".utf8))
        for file in [binary, withNUL] {
            let result = try devproxy(["ca", "init", "--ca-dir", dir.file("ca-\(PathName.lastComponent(of: file))"),
                                       "--passphrase-file", file])
            #expect(result.status == 1)
            #expect(errorLine(result) == "error: the passphrase file \(file) holds binary bytes, not text; a passphrase is "
                    + "text: make one with `openssl rand -base64 32 > \(file)`", "\(result.output)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("ca-binary.pass/root.key")))
    }

    /// A bundle that cannot be written leaves its intermediate revoked in the ledger and on the
    /// CRL, not listed as active with no key behind it.
    @Test func anIntermediateWhoseBundleCannotBeWrittenIsRevoked() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let failed = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co", "--out", dir.file("no/such/dir/a.pem")])
        #expect(failed.status == 1)
        #expect(errorLine(failed).contains("was recorded in the ledger and is now revoked"), "\(failed.output)")
        let list = try devproxy(["ca", "list", "--ca-dir", ca, "--json"])
        let entries = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
        #expect(entries?.count == 1 && entries?.first?["status"] as? String == "revoked", "\(list.output)")
        let crl = try Subprocess.run("openssl", ["crl", "-in", dir.file("ca/crl.pem"), "-noout", "-text"])
        #expect(crl.stdout.contains("Cessation Of Operation"), "\(crl.output)")
    }

    @Test func missingCADirectoryNamesTheFix() throws {
        let result = try devproxy(["ca", "list", "--ca-dir", dir.file("nowhere")])
        #expect(result.status == 1)
        #expect(errorLine(result).contains("devproxy ca init"))
    }

    @Test func corruptKeyAndTornLedgerAreReported() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let ledger = dir.read("ca/ledger.jsonl")
        dir.write("ca/ledger.jsonl", ledger + "{\"type\":\"interm")
        let list = try devproxy(["ca", "list", "--ca-dir", ca])
        #expect(list.status == 1)
        #expect(list.stderr.contains("line 2"))
        let issue = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co"])
        #expect(errorLine(issue).contains("line 2"))
        dir.write("ca/ledger.jsonl", ledger)
        dir.write("ca/root.key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
        let corrupt = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@b.co"])
        #expect(corrupt.status == 1)
        #expect(errorLine(corrupt).contains("corrupt"))
        #expect(!FileManager.default.fileExists(atPath: ca + "/intermediates"))
    }

    @Test func pinsMatchOpenSSLForCertificatesAndBackupKeys() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let result = try devproxy(["pins", ca + "/root.pem", "--json"])
        #expect(result.status == 0)
        let rows = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        let expected = try Subprocess.run("sh", ["-c", "openssl x509 -pubkey -noout -in '\(ca)/root.pem' | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | base64"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(rows?.first?["pin"] as? String == "sha256/" + expected)
        let human = try devproxy(["pins", ca + "/root.pem"])
        #expect(human.stdout.contains("pin        sha256/" + expected))
        let bad = try devproxy(["pins", dir.write("junk.pem", "junk")])
        #expect(bad.status == 1)
        #expect(errorLine(bad).contains("junk.pem"))
    }

    /// A second intermediate for an engineer who holds an active one (in any case: `revoke
    /// --email` matches so) says the first stays valid; a public suffix as a permitted domain says
    /// it constrains next to nothing. Both were silent.
    @Test func issueWarnsOfAHeldIntermediateAndAPublicSuffix() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        let first = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "ana@acme.dev"])
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first.output)")
        let serial = try #require(first.stdout.split(separator: "\n").first { $0.hasPrefix("  serial") }?.split(separator: " ").last)
        let second = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "ANA@acme.dev", "--permit-dns", "co.uk",
                                   "--permit-dns", "acme.dev"])
        #expect(second.status == 0, "\(second.output)")
        #expect(second.stderr.contains("warning: ana@acme.dev already holds the active intermediate \(serial)"), "\(second.stderr)")
        #expect(second.stderr.contains("`devproxy ca revoke --ca-dir \(ca) \(serial) --reason superseded`"))
        #expect(second.stderr.contains("warning: --permit-dns co.uk is a public suffix"), "\(second.stderr)")
        #expect(!second.stderr.contains("--permit-dns acme.dev"))
    }

    /// An engineer's bundle holds the intermediate's key: `pins` called it "the backup pin for the
    /// next key", which would let that one intermediate past every app's pins. A lone key keeps
    /// the backup note.
    @Test func aBundlesKeyIsNotOfferedAsTheBackupPin() throws {
        _ = try devproxy(["ca", "init", "--ca-dir", ca])
        _ = try devproxy(["ca", "issue", "--ca-dir", ca, "--email", "a@acme.dev", "--out", dir.file("a.pem")])
        let bundle = try devproxy(["pins", dir.file("a.pem")])
        #expect(bundle.stdout.contains("(the key of O = DevProxy, CN = DevProxy Intermediate a@acme.dev, emailAddress = "
                                       + "a@acme.dev in this file, not a backup pin"), "\(bundle.output)")
        #expect(!bundle.stdout.contains("use it as the backup pin"))
        let key = try devproxy(["pins", dir.write("next.key", String(decoding: try PrivateKey.generate(.p256).pem(), as: UTF8.self))])
        #expect(key.stdout.contains("(a key or CSR: use it as the backup pin for the next key)"), "\(key.output)")
        // The QA alternate root's key was offered as the backup pin too: an app pinning it would
        // trust the persona that stands for an unpinned CA.
        let qa = try devproxy(["qa", "init", "--ca-dir", ca])
        #expect(qa.status == 0, "\(qa.output)")
        let alternate = try devproxy(["pins", dir.file("ca/qa-alternate-root.key")])
        #expect(alternate.stdout.contains("(the QA alternate root's key (`devproxy qa init`): never pin it"), "\(alternate.output)")
        #expect(!alternate.stdout.contains("use it as the backup pin"))
    }
}
