import Foundation
import Testing
import TestSupport

/// What `devproxy run --intermediate` says about a name-constrained intermediate before the first
/// flow: which hosts it decrypts, and a `trust it:` example that works with it.
@Suite struct SignerSelectionBannerTests {
    let dir = TemporaryDirectory()
    var ca: String { dir.file("ca") }

    /// The banner's curl example named https://example.com/, which an intermediate for acme.dev
    /// passes through with example.com's real certificate: run as printed, against the team root
    /// alone, it failed verification, as if the root were not trusted. It names a host the
    /// intermediate signs for now, and a line says what passes through.
    @Test(.backstop) func aConstrainedIntermediatesBannerNamesAHostItDecrypts() throws {
        #expect(try Subprocess.run(Subprocess.devproxy, ["ca", "init", "--ca-dir", ca]).status == 0)
        let bundle = dir.file("ana.pem")
        let issued = try Subprocess.run(Subprocess.devproxy, ["ca", "issue", "--ca-dir", ca, "--email", "ana@acme.dev",
                                                              "--permit-dns", "acme.dev", "--permit-dns", "acme.test",
                                                              "--out", bundle])
        #expect(issued.status == 0, "\(issued.output)")
        // Nothing listens on 127.0.0.1:443: the request gets a 502 after the handshake with DevProxy,
        // which is what the example checks (--lazy-upstream: the origin only once a request is in).
        let proxy = try DevProxyProcess(["--intermediate", bundle, "--ca-dir", dir.file("engineer"), "--no-web",
                                         "--lazy-upstream", "--resolve", "acme.dev:443:127.0.0.1"])
        #expect(proxy.banner.contains("DevProxy: it may sign acme.dev, acme.test (and their subdomains); other hosts and IP "
                                      + "addresses pass through undecrypted"), "\(proxy.banner)")
        let line = try #require(proxy.banner.split(separator: "\n").first { $0.contains("trust it:") }, "\(proxy.banner)")
        #expect(line.hasSuffix(" https://acme.dev/"), "\(line)")
        // The example as printed: the leaf for acme.dev verifies against the team root alone.
        let words = line.split(separator: " ").map(String.init)
        let cacert = try #require(words.firstIndex(of: "--cacert").map { words[$0 + 1] })
        let curl = try Subprocess.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{ssl_verify_result}",
                                               "--proxy", "http://127.0.0.1:\(proxy.port)", "--cacert", cacert, "https://acme.dev/"],
                                      timeout: 30)
        #expect(curl.status == 0, "\(curl.output)")
        #expect(curl.stdout == "502 0", "verified against the team root alone, then no origin: \(curl.output)")

        // The next line's `devproxy exec` as printed, for a terminal's tools: it said
        // `SSL_CERT_FILE=ROOT your-tool`, the root alone, which fails every host passed through.
        let execLine = try #require(proxy.banner.split(separator: "\n").first { $0.contains("devproxy exec") }, "\(proxy.banner)")
        let printed = execLine.split(separator: " ").map(String.init)
        let options = Array(printed[try #require(printed.firstIndex(of: "exec")) + 1 ..< (try #require(printed.firstIndex(of: "--")))])
        #expect(options.contains("127.0.0.1:\(proxy.port)") && options.contains("--root"), "\(execLine)")
        let viaExec = try Subprocess.run(Subprocess.devproxy, ["exec"] + options + ["--", "curl", "-sS", "-o", "/dev/null", "-w",
                                                                                 "%{http_code} %{ssl_verify_result}", "https://acme.dev/"],
                                         environment: ["HOME": dir.file("home")], timeout: 30)
        #expect(viaExec.stdout == "502 0", "through the proxy, the team root trusted: \(viaExec.output)")
    }

    /// A file that is no bundle (the team root alone, a key alone) is refused with what to give:
    /// it said `no PEM private key found` or `no certificate found in the PEM data`.
    @Test func aFileThatIsNoBundleSaysWhatToGive() throws {
        #expect(try Subprocess.run(Subprocess.devproxy, ["ca", "init", "--ca-dir", ca]).status == 0)
        let bundle = "give the bundle `devproxy ca issue --out FILE` wrote (its key, the intermediate and the root), "
            + "as your security lead handed it over"
        for (file, missing) in [(ca + "/root.pem", "private key"), (ca + "/root.key", "certificate")] {
            let result = try Subprocess.run(Subprocess.devproxy, ["run", "--intermediate", file, "--ca-dir", dir.file("engineer"),
                                                                  "--listen", "127.0.0.1:0", "--session", "off"], timeout: 20)
            #expect(result.status == 1, "\(file): \(result.output)")
            #expect(result.stderr == "error: --intermediate \(file): it holds no \(missing); \(bundle)\n", "\(result.output)")
        }
    }
}
