import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// The onboarding site without a network: every route, its headers, escaping, the iOS profile
/// (read back by Python's plistlib) and the Android material (checked with openssl and Python).
@Suite struct OnboardingSiteTests {
    let pki: PKIFixture
    let site: OnboardingSite

    init() throws {
        pki = try PKIFixture()
        site = OnboardingSite(root: pki.root)
    }

    @Test func everyRouteHasItsTypeAndTheSecurityHeadersAndTheMarker() throws {
        site.setAddress("http://192.0.2.1:8080/")
        let expected = ["/": "text/html; charset=utf-8", "/index.html": "text/html; charset=utf-8",
                        "/root.crt": "application/x-x509-ca-cert", "/root.pem": "application/x-pem-file",
                        "/root.mobileconfig": "application/x-apple-aspen-config", "/qr.svg": "image/svg+xml",
                        "/qr.png": "image/png", "/onboarding.css": "text/css; charset=utf-8"]
        #expect(Set(expected.keys) == OnboardingSite.paths)
        for (path, type) in expected {
            let response = site.response(method: "GET", path: path + "?from=test")
            #expect(response.status == 200, "\(path)")
            #expect(response.header("content-type") == type, "\(path)")
            let csp = try #require(response.header("Content-Security-Policy"))
            #expect(csp.hasPrefix("default-src 'none'") && !csp.contains("unsafe") && !csp.contains("script-src"))
            #expect(response.header("X-Content-Type-Options") == "nosniff")
            #expect(response.header("X-DevProxy") == "answered by DevProxy (onboarding)")
        }
        #expect(site.response(method: "GET", path: "/root.crt").body == pki.root.der)
        #expect(site.response(method: "GET", path: "/root.pem").body == Array(pki.root.pem.utf8))
        #expect(site.response(method: "GET", path: "/root.crt").header("Content-Disposition")
                == "attachment; filename=\"devproxy-root.crt\"")
    }

    /// Through its local route, HEAD gets the GET answer's fields, Content-Length included (RFC
    /// 9110 §9.3.2; the engine sends no body for HEAD), for a request to `devproxy.test` only.
    @Test func theRouteAnswersDevproxyTestAndHEADLikeGET() {
        let route = site.route
        let request = { (method: String, url: String) in LocalRequest(method: method, url: url, httpVersion: "HTTP/1.1", headers: []) }
        #expect(route.matches(request("GET", "http://devproxy.test/root.crt")))
        #expect(route.matches(request("GET", "https://DevProxy.Test:443/")))
        #expect(!route.matches(request("GET", "http://example.com/root.crt")))
        let get = route.respond(request("GET", "http://devproxy.test/root.crt"))
        let head = route.respond(request("HEAD", "http://devproxy.test/root.crt"))
        #expect(head.status == 200 && head.body == get.body)
        let sent = LocalRoute.sentHeaders(head)
        #expect(sent.contains { $0.name == "Content-Length" && $0.value == "\(get.body.count)" })
        #expect(sent.map(\.name) == LocalRoute.sentHeaders(get).map(\.name))
    }

    @Test func unknownPathsAndMethodsAreRefused() {
        let missing = site.response(method: "GET", path: "/root.key")
        #expect(missing.status == 404)
        #expect(missing.header("X-DevProxy") != nil)
        let post = site.response(method: "POST", path: "/")
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD")
        // Before the proxy listens there is no address to encode.
        #expect(site.response(method: "GET", path: "/qr.png").status == 404)
        #expect(!OnboardingSite.serves("/favicon.ico") && OnboardingSite.serves("/root.crt?x=1"))
        #expect(OnboardingSite.names("DevProxy.Test.") && !OnboardingSite.names("devproxy.test.example"))
    }

    @Test func pageShowsTheRootAndEveryPlatformAndRunsNothing() throws {
        site.setAddress("http://192.0.2.1:8080/")
        let page = String(decoding: site.response(method: "GET", path: "/").body, as: UTF8.self)
        #expect(page.contains(pki.root.sha256Fingerprint))
        #expect(page.contains(pki.root.pin))
        for anchor in ["ios", "android", "macos", "linux", "windows", "firefox", "java", "qr"] {
            #expect(page.contains("<section id=\"\(anchor)\">"), "\(anchor)")
        }
        #expect(page.contains("Certificate Trust Settings"))
        #expect(page.contains("/apex/com.android.conscrypt/cacerts"))
        #expect(page.contains("keytool -importcert"))
        #expect(page.contains("devproxy trust install"))
        #expect(page.contains("<img src=\"/qr.svg\""))
        #expect(!page.lowercased().contains("<script") && !page.contains(" style=") && !page.contains("<style"))
        // On loopback the page says how a device reaches it instead of offering a QR code of
        // 127.0.0.1, which the phone opens as itself (the terminal said so, the page did not).
        site.setAddress("http://127.0.0.1:8080/", loopbackOnly: true)
        let local = String(decoding: site.response(method: "GET", path: "/").body, as: UTF8.self)
        #expect(!local.contains("<img src=\"/qr.svg\"") && !local.contains("Scan this code"))
        #expect(local.contains("listens on this machine only") && local.contains("--listen 0.0.0.0:PORT --allow-remote"))
    }

    /// A root whose name carries markup shows it as text on the page and in the profile.
    @Test func hostileRootNamesAreEscaped() throws {
        let directory = TemporaryDirectory()
        let name = "<script>alert(1)</script><img src=x onerror=alert(2)> & \"q\" 'a'"
        let root = try CAStore(directory: directory.file("ca")).initialize(name: name, keyType: .p256, days: 2,
                                                                           passphrase: nil)
        let hostile = OnboardingSite(root: root)
        hostile.setAddress("http://192.0.2.1:8080/?a=<b>&c=\"d\"")
        let page = String(decoding: hostile.response(method: "GET", path: "/").body, as: UTF8.self)
        #expect(!page.contains("<script") && !page.contains("<img src=x"))
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; "
                              + "&amp; &quot;q&quot; &#39;a&#39;"))
        #expect(page.contains("http://192.0.2.1:8080/?a=&lt;b&gt;&amp;c=&quot;d&quot;"))
        let profile = try Self.plist(hostile.response(method: "GET", path: "/root.mobileconfig").body)
        #expect(profile["PayloadDisplayName"] as? String == "DevProxy root: \(name)")
    }

    /// Python's plistlib reads the profile: one `com.apple.security.root` payload holding the
    /// root's DER, UUIDs that stay the same for the same root and change with another.
    @Test func mobileconfigHoldsTheRootWithStableUUIDs() throws {
        let body = site.response(method: "GET", path: "/root.mobileconfig").body
        let profile = try Self.plist(body)
        #expect(profile["PayloadType"] as? String == "Configuration")
        #expect(profile["PayloadVersion"] as? Int == 1)
        #expect(profile["PayloadDisplayName"] as? String == "DevProxy root: Test Root")
        let payloads = try #require(profile["PayloadContent"] as? [[String: Any]])
        #expect(payloads.count == 1)
        let payload = try #require(payloads.first)
        #expect(payload["PayloadType"] as? String == "com.apple.security.root")
        #expect(payload["PayloadContent"] as? String == pki.root.der.base64)
        let uuids = [profile["PayloadUUID"], payload["PayloadUUID"]].compactMap { $0 as? String }
        #expect(uuids.count == 2 && uuids[0] != uuids[1])
        for uuid in uuids {
            let form = /[0-9A-F]{8}-[0-9A-F]{4}-8[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}/
            #expect(uuid.wholeMatch(of: form) != nil, "\(uuid)")
        }
        #expect(OnboardingSite(root: pki.root).response(method: "GET", path: "/root.mobileconfig").body == body)
        let other = try PKIFixture()
        let otherSite = OnboardingSite(root: other.root)
        let otherProfile = try Self.plist(otherSite.response(method: "GET", path: "/root.mobileconfig").body)
        #expect(otherProfile["PayloadUUID"] as? String != uuids[0])
    }

    /// The page's Network Security Config (from `pins snippet`'s code) is XML that trusts user
    /// CAs and pins the root; the rooted-device file name is OpenSSL's old subject hash.
    @Test func androidMaterialMatchesOpenSSLAndParses() throws {
        let page = String(decoding: site.response(method: "GET", path: "/").body, as: UTF8.self)
        let hash = try Subprocess.run("openssl", ["x509", "-noout", "-subject_hash_old", "-in", pki.rootPath])
        #expect(page.contains("<code>\(hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).0</code>"))
        let directory = TemporaryDirectory()
        let path = directory.write("page.html", page)
        let script = """
        import html, re, sys, xml.etree.ElementTree as ET
        text = open(sys.argv[1]).read()
        nsc = ET.fromstring(html.unescape(re.search(r"<pre>(.*?)</pre>", text, re.S).group(1)).encode())
        print([c.get("src") for c in nsc.iter("certificates")], [p.text for p in nsc.iter("pin")])
        """
        let result = try Subprocess.run("python3", ["-c", script, path])
        #expect(result.status == 0, "\(result.stderr)")
        let pin = String(pki.root.pin.dropFirst("sha256/".count))
        #expect(result.stdout.trimmingCharacters(in: .newlines) == "['system', 'user'] ['\(pin)']")
    }

    /// Parses a property list with Python's plistlib, `<data>` as base64, into Foundation values.
    static func plist(_ bytes: [UInt8]) throws -> [String: Any] {
        let script = """
        import base64, json, plistlib, sys
        def plain(v):
            if isinstance(v, bytes): return base64.b64encode(v).decode()
            if isinstance(v, dict): return {k: plain(x) for k, x in v.items()}
            if isinstance(v, list): return [plain(x) for x in v]
            return v
        print(json.dumps(plain(plistlib.loads(sys.stdin.buffer.read()))))
        """
        let result = try Subprocess.run("python3", ["-c", script], stdin: bytes)
        guard result.status == 0,
              let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("plistlib could not read the profile: \(result.stderr)")
        }
        return object
    }
}
