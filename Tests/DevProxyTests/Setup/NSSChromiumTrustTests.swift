import Foundation
import Testing
import TestSupport

/// `devproxy trust install --store nss` as Chromium meets it: Debian's headless chromium (driven by
/// Playwright), with HOME a throwaway directory so its NSS database is `$HOME/.pki/nssdb`, loads an
/// HTTPS page through `devproxy run` with no certificate-error flags. Before install it refuses
/// DevProxy's leaf; after install it accepts it; after uninstall it refuses it again.
@Suite(.enabled(if: ExternalToolCheck.installed("certutil") && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
                "certutil (libnss3-tools) or chromium is not installed"))
struct NSSChromiumTrustTests {
    @Test(.backstop) func chromiumTrustsTheRootThroughItsNSSDatabase() throws {
        let harness = try TrustHarness()
        let db = harness.dir.file(".pki/nssdb")
        try FileManager.default.createDirectory(atPath: db, withIntermediateDirectories: true)
        let made = try Subprocess.run("certutil", ["-N", "-d", "sql:" + db, "--empty-password"])
        try #require(made.status == 0, "certutil -N: \(made.output)")
        let origin = try OriginServer()
        let proxy = try DevProxyProcess(["--ca-dir", harness.ca, "--sign-with-root", "--upstream-ca", origin.caPath,
                                         "--no-web", "--quiet"])
        defer { _ = proxy.stop() }
        // A load that neither got a status nor a certificate error (a browser that timed out on a
        // loaded machine, or `ERR_NETWORK_CHANGED` when a parallel test added a veth pair to this
        // namespace) is made once more; a certificate error is never retried.
        let load = { () throws -> String in
            let url = origin.url("/cl?n=12")
            let first = try Self.chromium(home: harness.dir.path, proxyPort: proxy.port, url: url)
            guard !first.hasPrefix("200 ") && !first.contains("ERR_CERT") else { return first }
            return try Self.chromium(home: harness.dir.path, proxyPort: proxy.port, url: url)
        }
        let untrusted = try load()
        #expect(untrusted.contains("ERR_CERT_AUTHORITY_INVALID"), "before install: \(untrusted)")
        let installed = try harness.trust(["install", "--store", "nss", "--nss-db", db])
        try #require(installed.status == 0, "\(installed.output)")
        let trusted = try load()
        #expect(trusted == "200 12", "after install Chromium accepts DevProxy's leaf through its NSS database: \(trusted)")
        let removed = try harness.trust(["uninstall", "--store", "nss", "--nss-db", db])
        #expect(removed.status == 0, "\(removed.output)")
        #expect(try load().contains("ERR_CERT_AUTHORITY_INVALID"), "after uninstall the root is gone")
    }

    /// `STATUS BODY_LENGTH`, or the navigation error Chromium reports.
    static func chromium(home: String, proxyPort: Int, url: String) throws -> String {
        let script = """
            import sys
            from playwright.sync_api import sync_playwright, Error
            proxy, url = sys.argv[1:3]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                    "--proxy-server=" + proxy, "--proxy-bypass-list=<-loopback>"])
                try:
                    page = browser.new_page()
                    try:
                        response = page.goto(url, timeout=30000)
                        print(response.status, len(response.body()))
                    except Error as error:
                        print(str(error).splitlines()[0])
                finally:
                    browser.close()
            """
        let result = try Subprocess.run("python3", ["-c", script, "127.0.0.1:\(proxyPort)", url],
                                        environment: ["HOME": home], timeout: 90)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + (result.status == 0 ? "" : " " + result.stderr)
    }
}
