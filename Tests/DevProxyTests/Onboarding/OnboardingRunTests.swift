import Foundation
import Testing
import TestSupport

/// `devproxy run` prints the onboarding address (and, asked or on a terminal, its QR code), and
/// that address serves the root of the CA directory.
@Suite struct OnboardingRunTests {
    /// On loopback, even with `--qr`, no QR code: a phone would open 127.0.0.1 as itself; the
    /// address line says how to listen for one instead (the QR code itself: `QRCodeTests`).
    @Test func runPrintsTheAddressAndNoQRCodeOfLoopback() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--qr"],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        let url = "http://127.0.0.1:\(proxy.port)/"
        let line = try #require(proxy.banner.split(separator: "\n").first { $0.hasPrefix("onboarding: ") })
        #expect(line.hasPrefix("onboarding: \(url) (this machine only: a phone cannot reach it; for a phone run with "
                               + "--listen 0.0.0.0:\(proxy.port) --allow-remote)"))
        #expect(!proxy.banner.contains("\u{1B}[30;107m"), "no QR code of 127.0.0.1")
        let fetched = try Subprocess.run("curl", ["-sS", "-o", dir.file("root.crt"), "--max-time", "20",
                                                  url + "root.crt"])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(try OnboardingProxyTests.fingerprint(dir.file("root.crt"), der: true)
                == (try OnboardingProxyTests.fingerprint(dir.file("ca/root.pem"), der: false)))
        #expect(proxy.stop().status == 0)
    }

    /// Into a pipe (a log, a script) the address line comes alone, without the QR code.
    @Test func noQRCodeIntoAPipe() throws {
        let dir = TemporaryDirectory()
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca")],
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"])
        #expect(proxy.banner.contains("onboarding: http://127.0.0.1:\(proxy.port)/ "))
        #expect(!proxy.banner.contains("\u{1B}["))
        #expect(proxy.stop().status == 0)
    }
}
