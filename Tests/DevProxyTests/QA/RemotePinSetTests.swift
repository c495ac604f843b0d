import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Remote pin sets end to end: `pins publish` read back by an independent reader (Python's
/// json and the date arithmetic each format implies), its signature checked by
/// `openssl dgst -verify`; `--pinset-rewrite` through a running proxy with curl and a real
/// origin; bad input refused with one `error:` line.
@Suite struct RemotePinSetTests {
    /// 2027-06-30T00:00:00Z as Unix seconds.
    static let expiresUnix = 1_814_313_600

    /// Publishes with `format` and reads `expiresAt` back in Python as the article's decoder
    /// would: `reference` seconds + 978307200 (2001-01-01 in Unix time) must be the Unix date.
    @Test(arguments: ["reference", "iso8601", "unix"])
    func publishedDatesDecodeAsEachFormatSays(format: String) throws {
        let directory = TemporaryDirectory()
        let out = directory.file("pins.json")
        let backup = "sha256/" + String(repeating: "B", count: 43) + "="
        let primary = "sha256/" + String(repeating: "A", count: 43) + "="
        let published = try Subprocess.run(Subprocess.devproxy, [
            "pins", "publish", "--pin", primary, "--backup", backup, "--expires", "2027-06-30",
            "--min-app-version", "2.4.0", "--date-format", format, "--out", out,
        ])
        #expect(published.status == 0, "\(published.output)")
        let script = """
        import json, sys, datetime
        d = json.load(open(sys.argv[1]))
        assert sorted(d) == ["expiresAt", "hashes", "minAppVersion"], d
        e = d["expiresAt"]
        fmt = sys.argv[2]
        if fmt == "reference":
            assert isinstance(e, (int, float)); unix = e + 978307200
        elif fmt == "unix":
            assert isinstance(e, (int, float)); unix = e
        else:
            assert isinstance(e, str); unix = datetime.datetime.fromisoformat(e.replace("Z", "+00:00")).timestamp()
        print(int(unix), ",".join(d["hashes"]), d["minAppVersion"])
        """
        let read = try Subprocess.run("python3", ["-c", script, out, format])
        #expect(read.status == 0, "\(read.output)")
        let (a, b) = (String(repeating: "A", count: 43), String(repeating: "B", count: 43))
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(Self.expiresUnix) \(a)=,\(b)= 2.4.0")
        // Only the matching decoder accepts it: a reference-format set read as iso8601 fails.
        let other = format == "reference" ? "iso8601" : "reference"
        let wrong = try Subprocess.run(Subprocess.devproxy, ["pins", "verify", out, "--date-format", other])
        if format == "unix" {
            // Unix seconds read as reference seconds decode, 31 years off: verify shows the date.
            #expect(wrong.stdout.contains("2058-"), "\(wrong.output)")
        } else {
            #expect(wrong.status == 1 && wrong.stderr.hasPrefix("error: "), "\(wrong.output)")
        }
        let right = try Subprocess.run(Subprocess.devproxy, ["pins", "verify", out, "--date-format", format])
        #expect(right.status == 0 && right.stdout.contains("2027-06-30T00:00:00Z"), "\(right.output)")
    }

    @Test func signedPinSetVerifiesWithOpensslAndTamperingIsCaught() throws {
        let directory = TemporaryDirectory()
        let key = directory.file("sign.key")
        let made = try Subprocess.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt",
                                                  "ec_paramgen_curve:P-256", "-out", key])
        #expect(made.status == 0)
        let pki = try PKIFixture()
        let out = directory.file("pins.json")
        let published = try Subprocess.run(Subprocess.devproxy, ["pins", "publish", pki.rootPath, "--backup",
                                                                 pki.intermediatePath(),
                                                                 "--expires", "2027-06-30", "--min-app-version", "1.0",
                                                                 "--sign-key", key, "--out", out])
        #expect(published.status == 0, "\(published.output)")
        #expect(directory.read("pins.json").contains(String(pki.root.pin.dropFirst(7))))
        let publicKey = directory.file("sign.pub")
        _ = try Subprocess.run("openssl", ["pkey", "-in", key, "-pubout", "-out", publicKey])
        let openssl = try Subprocess.run("openssl", ["dgst", "-sha256", "-verify", publicKey, "-signature",
                                                     out + ".sig", out])
        #expect(openssl.status == 0 && openssl.stdout.contains("Verified OK"), "\(openssl.output)")
        let verify = try Subprocess.run(Subprocess.devproxy, ["pins", "verify", out, "--signature", out + ".sig",
                                                              "--key", publicKey])
        #expect(verify.status == 0 && verify.stdout.contains("signature      valid"), "\(verify.output)")

        _ = directory.write("pins.json", directory.read("pins.json").replacingOccurrences(of: "1.0", with: "0.1"))
        let tampered = try Subprocess.run("openssl", ["dgst", "-sha256", "-verify", publicKey, "-signature",
                                                      out + ".sig", out])
        #expect(tampered.status != 0)
        let caught = try Subprocess.run(Subprocess.devproxy, ["pins", "verify", out, "--signature", out + ".sig",
                                                              "--key", publicKey])
        #expect(caught.status == 1 && caught.stderr.contains("error: "), "\(caught.output)")
    }

    @Test func badInputIsOneErrorLine() throws {
        let directory = TemporaryDirectory()
        let notJSON = directory.write("pins.json", "<html>not a pin set</html>")
        let rsa = directory.file("rsa.key")
        _ = try Subprocess.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048",
                                           "-out", rsa])
        let shortPin = directory.write("short.json",
                                       #"{"hashes": ["AAAA"], "expiresAt": 836006400, "minAppVersion": "1"}"#)
        let cases: [[String]] = [
            ["pins", "verify", notJSON],
            ["pins", "verify", shortPin],
            ["pins", "publish", "--pin", "sha256/AAAA", "--expires", "2027-06-30", "--min-app-version", "1"],
            ["pins", "publish", "--pin", "sha256/" + String(repeating: "A", count: 43) + "=", "--expires", "2027-06-30",
             "--min-app-version", "1", "--sign-key", rsa, "--out", directory.file("x.json")],
            ["pins", "publish", "--pin", "sha256/" + String(repeating: "A", count: 43) + "=", "--expires", "2027-06-30",
             "--min-app-version", "1", "--sign-key", notJSON, "--out", directory.file("y.json")],
        ]
        for arguments in cases {
            let result = try Subprocess.run(Subprocess.devproxy, arguments)
            #expect(result.status != 0, "\(arguments)")
            let lines = result.stderr.split(separator: "\n").filter { !$0.hasPrefix("warning: ") }
            #expect(lines.count == 1 && lines[0].hasPrefix("error: "), "\(arguments): \(result.stderr)")
        }
    }

    /// `devproxy run --pinset-rewrite` with a real origin and curl: the set gains the team root's
    /// pin and keeps its fields, gzip is sent uncompressed, a chunked set gets a Content-Length,
    /// a non-JSON response passes untouched with a note, and other URLs are unaffected.
    @Test func pinSetRewrittenInFlight() throws {
        let pki = try PKIFixture()
        let host = "api.acme.dev"
        let origin = try OriginServer(names: [host])
        let log = pki.directory.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", pki.store.directory, "--intermediate", pki.bundlePath,
                                         "--log", log, "--quiet", "--upstream-ca", origin.caPath,
                                         "--resolve", "\(host):\(origin.port):127.0.0.1",
                                         "--pinset-rewrite", "https://\(host):*/.well-known/pins.json*",
                                         "--pinset-rewrite", "https://\(host):*/cl*",
                                         "--pinset-rewrite", "https://\(host):*/big*"])
        func curl(_ path: String) throws -> Subprocess.Result {
            try Subprocess.run("curl", ["-sS", "--http1.1", "-D", "-", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                        "--cacert", pki.rootPath,
                                        "--max-time", "10", "https://\(host):\(origin.port)\(path)"])
        }
        let rootPin = String(pki.root.pin.dropFirst(7))
        for query in ["", "?gzip=1", "?chunked=1"] {
            let result = try curl("/.well-known/pins.json" + query)
            #expect(result.status == 0, "\(result.output)")
            // curl -D prints the CONNECT response's head first; the origin's is the last one.
            let end = try #require(result.stdout.range(of: "\r\n\r\n", options: .backwards))
            let (head, body) = (String(result.stdout[..<end.lowerBound]), String(result.stdout[end.upperBound...]))
            let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                                      "\(body)")
            let hashes = object["hashes"] as? [String] ?? []
            #expect(hashes == ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                               "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=", rootPin])
            #expect(object["minAppVersion"] as? String == "2.4.0")
            #expect((object["expiresAt"] as? NSNumber)?.intValue == 836_006_400)
            #expect(head.lowercased().contains("content-length: \(body.utf8.count)"), "\(head)")
            #expect(!head.lowercased().contains("content-encoding"), "\(head)")
            #expect(!head.lowercased().contains("transfer-encoding"), "\(head)")
            #expect(head.contains("max-age=60"), "other headers are kept: \(head)")
        }
        let notAPinSet = try curl("/cl?n=5")
        #expect(notAPinSet.stdout.hasSuffix("\r\n\r\nhello"), "\(notAPinSet.output)")
        let elsewhere = try curl("/chunked")
        #expect(elsewhere.stdout.contains("\r\n\r\nfirst,second,third"), "\(elsewhere.output)")
        // Matched, but past the 1 MiB a pin set may have and with no length to tell in advance: the
        // bytes read so far go first, then the rest streams, untouched and whole.
        let saved = pki.directory.file("big.bin")
        let tooLarge = try Subprocess.run("curl", ["-sS", "--http1.1", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                                   "--cacert", pki.rootPath, "--max-time", "20", "-o", saved,
                                                   "https://\(host):\(origin.port)/big?mb=3&chunked=1"])
        #expect(tooLarge.status == 0, "\(tooLarge.output)")
        #expect(try Self.isByteRamp(file: saved, length: 3 << 20), "the body arrived altered")
        _ = proxy.stop()

        let flows = try FlowLogReader.read(path: log).flows
        let sets = flows.filter { $0.request?.url.contains("pins.json") == true }
        #expect(sets.count == 3)
        #expect(sets.allSatisfy { $0.pinset?.rewritten == true && $0.pinset?.added == [rootPin] && $0.error == nil })
        #expect(sets.contains { $0.pinset?.note == "sent uncompressed (was gzip)" })
        let untouched = try #require(flows.first { $0.request?.url.contains("/cl") == true })
        #expect(untouched.pinset?.rewritten == false)
        #expect(untouched.pinset?.note?.contains("not a JSON object") == true,
                "\(String(describing: untouched.pinset))")
        #expect(flows.first { $0.request?.url.contains("/chunked") == true }?.pinset == nil)
        let big = try #require(flows.first { $0.request?.url.contains("/big") == true })
        #expect(big.pinset?.rewritten == false && big.pinset?.note?.contains("-byte limit for a pin set") == true,
                "\(String(describing: big.pinset))")
        #expect(big.error == nil && big.response?.body?.size == 3 << 20, "\(String(describing: big.error))")
    }

    /// Whether `file` holds exactly `length` bytes of 0, 1, … 255, 0, 1, … (the origin's `/big`),
    /// read 64 KiB at a time: the soak test in a parallel suite bounds this process's RSS.
    static func isByteRamp(file: String, length: Int) throws -> Bool {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        var offset = 0
        while let piece = try handle.read(upToCount: 64 * 1024), !piece.isEmpty {
            for byte in piece {
                guard byte == UInt8(offset & 0xFF) else { return false }
                offset += 1
            }
        }
        return offset == length
    }

    /// A pin set from an HTTP/2 origin (nghttpd) is rewritten the same way whichever version the
    /// client speaks: to an HTTP/2 client (h2 both sides), and to an HTTP/1.1 client (curl offers
    /// only `http/1.1`, the origin then gets h2; the one response relay serves both legs). Held until
    /// its body is whole, sent with a fresh content-length (no chunking), recorded in the flow; a 404
    /// for the same pattern passes untouched with a note.
    @Test(arguments: ["--http2", "--http1.1"])
    func pinSetFromAnHTTP2OriginIsRewrittenToo(_ clientVersion: String) throws {
        let pki = try PKIFixture()
        let origin = try HTTP2Origin(.nghttpd)
        let body = #"{"expiresAt": 836006400, "hashes": ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="], "#
            + #""minAppVersion": "1"}"#
        try FileManager.default.createDirectory(atPath: origin.documentRoot + "/.well-known",
                                                withIntermediateDirectories: true)
        try Data(body.utf8).write(to: URL(fileURLWithPath: origin.documentRoot + "/.well-known/pins.json"))
        let log = pki.directory.file("flows.jsonl")
        let proxy = try DevProxyProcess(["--ca-dir", pki.store.directory, "--intermediate", pki.bundlePath,
                                         "--log", log, "--quiet", "--no-web", "--upstream-ca", origin.caPath,
                                         "--pinset-rewrite", "*/.well-known/*"])
        let curl = { (path: String) throws -> Subprocess.Result in
            try Subprocess.run("curl", ["-sS", clientVersion, "-D", "-", "--proxy", "http://127.0.0.1:\(proxy.port)",
                                        "--cacert", pki.rootPath, "--max-time", "10",
                                        "https://localhost:\(origin.port)\(path)"])
        }
        let statusLine = clientVersion == "--http2" ? "HTTP/2" : "HTTP/1.1"
        let result = try curl("/.well-known/pins.json")
        #expect(result.status == 0, "\(result.output)")
        let end = try #require(result.stdout.range(of: "\r\n\r\n", options: .backwards))
        let (heads, served) = (String(result.stdout[..<end.lowerBound]), String(result.stdout[end.upperBound...]))
        // `-D -` also prints the CONNECT answer: the origin's head is the last one.
        let head = heads.components(separatedBy: "\r\n\r\n").last ?? heads
        #expect(head.hasPrefix("\(statusLine) 200"), "\(head)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(served.utf8)) as? [String: Any],
                                  "\(served)")
        let rootPin = String(pki.root.pin.dropFirst(7))
        #expect(object["hashes"] as? [String] == ["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", rootPin])
        #expect(object["minAppVersion"] as? String == "1")
        #expect(head.lowercased().contains("content-length: \(served.utf8.count)"), "\(head)")
        #expect(!head.lowercased().contains("transfer-encoding"), "\(head)")
        let missing = try curl("/.well-known/none.json")
        #expect(missing.stdout.contains("\(statusLine) 404"), "\(missing.output)")
        _ = proxy.stop()
        let flows = try FlowLogReader.read(path: log).flows
        let flow = try #require(flows.first { $0.request?.url.hasSuffix("pins.json") == true })
        #expect(flow.request?.httpVersion == statusLine && flow.response?.httpVersion == "HTTP/2")
        #expect(flow.pinset?.rewritten == true && flow.pinset?.added == [rootPin], "\(String(describing: flow.pinset))")
        #expect(flow.response?.body?.text == served)
        #expect(flow.error == nil, "\(String(describing: flow.error))")
        let notFound = try #require(flows.first { $0.request?.url.hasSuffix("none.json") == true })
        #expect(notFound.pinset?.rewritten == false && notFound.pinset?.note == "not rewritten: status 404",
                "\(String(describing: notFound.pinset))")
    }
}
