import CertAuthority
import CTLS
import Foundation
import PinningPolicy

/// The onboarding page: what the team root is and how to trust it on each platform. Every value
/// that comes from outside the source (the root's subject, the address) is escaped; the page has
/// no script and no inline style (its stylesheet is `/onboarding.css`).
struct OnboardingPage {
    let root: Certificate
    /// `http://HOST:PORT/` when known: shown with its QR code.
    let address: String?
    /// The address is loopback: no other device reaches it.
    var loopbackOnly = false

    /// A placeholder the team replaces with its API's domain in the Network Security Config.
    static let exampleDomain = "api.example.com"

    var html: String {
        let subject = MarkupText.escape(root.subject)
        let name = MarkupText.escape(root.commonName ?? root.subject)
        return """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Install the DevProxy root</title>
        <link rel="stylesheet" href="/onboarding.css">
        </head>
        <body>
        <main>
        <h1>Install the DevProxy root</h1>
        <p>DevProxy shows apps certificates signed by your team&#39;s root, <strong>\(name)</strong>. Install and \
        trust that root on this device, then set the device&#39;s HTTP proxy to DevProxy. This page holds only \
        public material: the root certificate, never a key.</p>
        <dl class="facts">
        <dt>Subject</dt><dd>\(subject)</dd>
        <dt>SHA-256 fingerprint</dt><dd><code id="fingerprint">\(root.sha256Fingerprint)</code></dd>
        <dt>SPKI pin</dt><dd><code id="pin">\(MarkupText.escape(root.pin))</code></dd>
        <dt>Valid until</dt><dd>\(ISO8601.string(root.notAfter))</dd>
        </dl>
        <p>Before you trust it, check that the fingerprint matches the one your security lead or \
        <code>devproxy ca export</code> shows.</p>
        <ul class="downloads">
        <li><a href="/root.mobileconfig">root.mobileconfig</a> for iPhone, iPad and Mac</li>
        <li><a href="/root.crt">root.crt</a> (DER) for Android, Windows and Java</li>
        <li><a href="/root.pem">root.pem</a> (PEM) for Linux, Firefox and command-line tools</li>
        </ul>
        \(qrSection)
        \(steps)
        </main>
        </body>
        </html>

        """
    }

    private var qrSection: String {
        guard let address else { return "" }
        let escaped = MarkupText.escape(address)
        if loopbackOnly {
            return """
            <section id="qr">
            <h2>On another device</h2>
            <p>DevProxy listens on this machine only (<code>\(escaped)</code>), which a phone or another \
            computer cannot reach. To set one up, run <code>devproxy run --listen 0.0.0.0:PORT --allow-remote</code> \
            and open the address it prints on the device (this page then shows its QR code), or set the \
            device&#39;s proxy to this machine and open <code>http://devproxy.test/</code>.</p>
            </section>
            """
        }
        return """
        <section id="qr">
        <h2>On another device</h2>
        <p>Scan this code or open <a href="\(escaped)"><code>\(escaped)</code></a> on the device you are setting up; \
        it works before the device&#39;s proxy is set.</p>
        <img src="/qr.svg" width="264" height="264" alt="QR code of \(escaped)">
        </section>
        """
    }

    private var steps: String {
        let hash = String(format: "%08lx", root.withX509 { X509_subject_name_hash_old($0) })
        let pinBase64 = String(root.pin.dropFirst("sha256/".count))
        let pin = PinSnippet.PinLine(base64: pinBase64, comment: "DevProxy team root: \(root.subject)")
        let snippet = PinSnippet(domain: Self.exampleDomain, includeSubdomains: true, pins: [pin])
        let nsc = MarkupText.escape(snippet.render(.nsc))
        let name = MarkupText.escape(root.commonName ?? root.subject)
        return """
        <section id="ios">
        <h2>iPhone and iPad</h2>
        <ol>
        <li>Open this page in Safari and tap <a href="/root.mobileconfig">root.mobileconfig</a>; allow the \
        download.</li>
        <li>Settings → General → VPN &amp; Device Management (on some versions the \
        <em>Profile Downloaded</em> row at the top of Settings): install the profile and enter the passcode.</li>
        <li>Settings → General → About → Certificate Trust Settings: turn on full trust for <strong>\(name)</strong>. \
        Without this step iOS installs the root but does not trust it for TLS.</li>
        <li>Settings → Wi-Fi → (i) next to the network → Configure Proxy → Manual: DevProxy&#39;s address and port.</li>
        </ol>
        </section>
        <section id="android">
        <h2>Android</h2>
        <ol>
        <li>Download <a href="/root.crt">root.crt</a>.</li>
        <li>Settings → Security (or Security &amp; privacy) → More security settings → Encryption &amp; credentials → \
        Install a certificate → CA certificate, and pick the file. Names vary by vendor; search Settings for \
        &quot;CA certificate&quot;.</li>
        <li>Wi-Fi → the network → Edit → Advanced → Proxy: Manual, DevProxy&#39;s address and port.</li>
        </ol>
        <p>Since Android 7, apps trust user-installed CAs only when their Network Security Config says so; \
        browsers do. A team&#39;s debug build needs a config like this one (<code>devproxy pins snippet \
        --format nsc</code> writes it for your domain; replace \(Self.exampleDomain)):</p>
        <pre>\(nsc)</pre>
        <p>Rooted devices can put the root in the system store instead, as <code>\(hash).0</code> (the \
        certificate in PEM, named by its OpenSSL subject hash): <code>/system/etc/security/cacerts/</code> up to \
        Android 13; from Android 14 the store is <code>/apex/com.android.conscrypt/cacerts/</code>, a read-only \
        APEX directory that must be overlaid (for example with a tmpfs mount) in the mount namespace of every \
        process that should trust it.</p>
        </section>
        <section id="macos">
        <h2>macOS</h2>
        <p>Open <a href="/root.mobileconfig">root.mobileconfig</a>, then install it in System Settings → Privacy \
        &amp; Security → Profiles. Or, in Terminal: <code>sudo security add-trusted-cert -d -r trustRoot -k \
        /Library/Keychains/System.keychain root.crt</code>, or <code>devproxy trust install</code> on the machine \
        that runs DevProxy.</p>
        </section>
        <section id="linux">
        <h2>Linux</h2>
        <p>On the machine that runs DevProxy: <code>devproxy trust install</code> (the system store, NSS for \
        Chromium and Firefox, and Java). Elsewhere, Debian and Ubuntu: <code>sudo cp root.pem \
        /usr/local/share/ca-certificates/devproxy-root.crt &amp;&amp; sudo update-ca-certificates</code>; Fedora \
        and RHEL: <code>sudo cp root.pem /etc/pki/ca-trust/source/anchors/devproxy-root.pem &amp;&amp; sudo \
        update-ca-trust</code>.</p>
        </section>
        <section id="windows">
        <h2>Windows</h2>
        <p>In an administrator prompt: <code>certutil -addstore -f Root root.crt</code> (or, for your user only, \
        <code>certutil -user -addstore Root root.crt</code>). Or open root.crt → Install Certificate → Place all \
        certificates in the following store → Trusted Root Certification Authorities.</p>
        </section>
        <section id="firefox">
        <h2>Firefox</h2>
        <p>Firefox keeps its own store: Settings → Privacy &amp; Security → Certificates → View Certificates → \
        Authorities → Import, pick root.pem and tick &quot;Trust this CA to identify websites&quot;. On desktop, \
        setting <code>security.enterprise_roots.enabled</code> to true in about:config makes it trust the \
        system&#39;s roots instead.</p>
        </section>
        <section id="java">
        <h2>Java</h2>
        <p>Java uses its own cacerts: <code>keytool -importcert -cacerts -alias devproxy -file root.crt</code> \
        (the default store password is changeit), or a separate store passed with \
        <code>-Djavax.net.ssl.trustStore=FILE</code>.</p>
        </section>
        """
    }

    /// The page's only stylesheet: readable on a phone, light and dark.
    static let stylesheet = """
    :root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fff; --muted: #f2f2f4; --link: #0a58ca; }
    @media (prefers-color-scheme: dark) { :root { --fg: #e8e8ea; --bg: #16161a; --muted: #24242a; --link: #7db3ff; } }
    body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
    main { max-width: 46rem; margin: 0 auto; padding: 1rem; }
    a { color: var(--link); }
    code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; overflow-wrap: anywhere; }
    pre { background: var(--muted); padding: 0.75rem; overflow-x: auto; white-space: pre; }
    dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
    dl.facts dt { font-weight: 600; }
    dl.facts dd { margin: 0; overflow-wrap: anywhere; }
    ul.downloads a { font-weight: 600; }
    #qr img { background: #fff; max-width: 100%; height: auto; }

    """
}
