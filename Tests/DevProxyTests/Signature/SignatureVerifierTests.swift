import HTTPTypes
import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// `--verify-signature`: requests signed by Python's `hmac` (an independent signer written from
/// the article's `RequestSigner`) go through the proxy with curl to a real origin (hypercorn),
/// and each flow records `signature: {valid, reason}`.
@Suite(.serialized) struct SignatureVerifierTests {
    let directory = TemporaryDirectory()

    /// Signs as the article's RequestSigner does (or as a JSON scheme says) and prints the headers
    /// as JSON. Foundation's URL.path: percent-decoded, trailing slash dropped (not for "/").
    static let pythonSigner = #"""
    import base64, hashlib, hmac, json, sys, time, urllib.parse, uuid
    spec = json.load(sys.stdin)
    key = open(spec["key_file"], "rb").read()
    if key.endswith(b"\n"): key = key[:-1]
    body = open(spec["body_file"], "rb").read() if spec.get("body_file") else b""
    path = urllib.parse.unquote(spec["path"])
    if len(path) > 1 and path.endswith("/"): path = path[:-1]
    timestamp = str(int(time.time()) + spec.get("offset", 0))
    nonce = spec.get("nonce") or str(uuid.uuid4()).upper()
    algorithm = getattr(hashlib, spec.get("hash", "sha256"))
    parts = {"method": spec["method"], "path": path, "query": spec.get("query", ""), "timestamp": timestamp,
             "nonce": nonce, "body_sha256": base64.b64encode(hashlib.sha256(body).digest()).decode(),
             "body_sha256_hex": hashlib.sha256(body).hexdigest()}
    names = spec.get("parts", ["method", "path", "query", "timestamp", "nonce", "body_sha256"])
    message = spec.get("separator", "\n").join(parts[n] for n in names).encode()
    mac = hmac.new(key, message, algorithm).digest()
    signature = mac.hex() if spec.get("encoding") == "hex" else base64.b64encode(mac).decode()
    h = spec.get("headers", {})
    print(json.dumps({h.get("timestamp", "X-Timestamp"): timestamp, h.get("nonce", "X-Nonce"): nonce,
                      h.get("signature", "X-Signature"): signature}))
    """#

    private func sign(_ spec: [String: Any]) throws -> [String: String] {
        let input = try JSONSerialization.data(withJSONObject: spec)
        let result = try Subprocess.run("python3", ["-c", Self.pythonSigner], stdin: [UInt8](input))
        let parsed = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        guard result.status == 0, let headers = parsed as? [String: String] else {
            throw TestFailure("python signer failed: \(result.stderr)")
        }
        return headers
    }

    /// curl through the proxy with `headers` and `body`; the origin's echo must come back.
    private func send(_ proxy: ProxyHarness, _ url: String, method: String, headers: [String: String],
                      body: String? = nil, omit: String? = nil) throws {
        var arguments = ["-X", method, url]
        for (name, value) in headers where name != omit { arguments += ["-H", "\(name): \(value)"] }
        if let body { arguments += ["--data-binary", "@" + directory.write("body-\(UUID().uuidString)", body)] }
        let result = try proxy.curl(arguments)
        #expect(result.stdout.contains("\"method\": \"\(method)\""), "\(result.output)")
    }

    @Test func articleSchemeThroughTheProxy() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let keyFile = directory.write("hmac.key", "s3cr3t-key\n")
        let verifier = try SignatureVerifier(rules: [try SignatureRule.parse("local*=\(keyFile)")])
        // Insecure upstream: the origin's certificate names localhost, and case 8 dials 127.0.0.1.
        let proxy = try ProxyHarness(configure: {
            $0.insecureUpstream = true
            $0.signatures = verifier
        })
        let base = "https://localhost:\(origin.port)"
        let bodyFile = directory.write("body.json", #"{"amount": 42}"#)
        var expected: [Flow.SignatureCheck?] = []

        // 1. A GET with a query, its path percent-encoded with a trailing slash (Foundation's path
        //    is decoded and has none).
        let get = try sign(["key_file": keyFile, "method": "GET", "path": "/v1/caf%C3%A9/", "query": "a=1&b=two"])
        try send(proxy, base + "/v1/caf%C3%A9/?a=1&b=two", method: "GET", headers: get)
        expected.append(.init(valid: true, reason: nil))
        // 2. A POST with a body.
        let post = try sign(["key_file": keyFile, "method": "POST", "path": "/pay", "body_file": bodyFile])
        try send(proxy, base + "/pay", method: "POST", headers: post, body: #"{"amount": 42}"#)
        expected.append(.init(valid: true, reason: nil))
        // 3. The same request again: its nonce was used.
        try send(proxy, base + "/pay", method: "POST", headers: post, body: #"{"amount": 42}"#)
        expected.append(.init(valid: false, reason: "nonce_reused"))
        // 4. The body changed after signing.
        let tampered = try sign(["key_file": keyFile, "method": "POST", "path": "/pay", "body_file": bodyFile])
        try send(proxy, base + "/pay", method: "POST", headers: tampered, body: #"{"amount": 4200}"#)
        expected.append(.init(valid: false, reason: "bad_signature"))
        // 5. Signed ten minutes ago.
        let old = try sign(["key_file": keyFile, "method": "GET", "path": "/late", "offset": -600])
        try send(proxy, base + "/late", method: "GET", headers: old)
        expected.append(.init(valid: false, reason: "stale_timestamp"))
        // 6. No nonce header.
        let noNonce = try sign(["key_file": keyFile, "method": "GET", "path": "/n"])
        try send(proxy, base + "/n", method: "GET", headers: noNonce, omit: "X-Nonce")
        expected.append(.init(valid: false, reason: "missing_header"))
        // 7. Signed with another key.
        let otherKey = directory.write("other.key", "not-the-key")
        let forged = try sign(["key_file": otherKey, "method": "GET", "path": "/f"])
        try send(proxy, base + "/f", method: "GET", headers: forged)
        expected.append(.init(valid: false, reason: "bad_signature"))
        // 8. A host no rule covers: no verdict.
        let elsewhere = try sign(["key_file": keyFile, "method": "GET", "path": "/x"])
        try send(proxy, "https://127.0.0.1:\(origin.port)/x", method: "GET", headers: elsewhere)
        expected.append(nil)

        let flows = proxy.flows(count: expected.count)
        #expect(flows.map(\.signature) == expected)
        // The console line says the verdict (the origin answered 200 every time).
        let lines = flows.map { ConsoleFlowPrinter.line(for: $0) }
        #expect(lines[1].hasSuffix(" (signature ok)"), "\(lines[1])")
        #expect(lines[2].hasSuffix(" (signature invalid: nonce_reused)"), "\(lines[2])")
        #expect(lines[4].hasSuffix(" (signature invalid: stale_timestamp)"), "\(lines[4])")
        #expect(!lines[7].contains("signature"), "\(lines[7])")
    }

    /// A scheme from JSON (HMAC-SHA512, hex, other header names, other parts) verifies what
    /// Python signs the same way.
    @Test func jsonSchemeThroughTheProxy() throws {
        let origin = try HTTP2Origin(.hypercornHTTP1)
        let keyFile = directory.write("hmac.key", "another-key")
        let schemeFile = directory.write("scheme.json", """
            {"hash": "sha512", "encoding": "hex", "signature_header": "X-Sig", "timestamp_header": "X-Time",
             "nonce_header": "X-Request-Id", "separator": "|",
             "parts": ["timestamp", "method", "path", "nonce", "body_sha256_hex"]}
            """)
        let cas = try Certificate.all(from: [UInt8](try Data(contentsOf: URL(fileURLWithPath: origin.caPath))))
        let verifier = try SignatureVerifier(rules: [try SignatureRule.parse("localhost=\(keyFile),\(schemeFile)")])
        let proxy = try ProxyHarness(configure: {
            $0.upstreamCAs = cas
            $0.signatures = verifier
        })
        let bodyFile = directory.write("body.txt", "hello")
        let headers = try sign(["key_file": keyFile, "method": "PUT", "path": "/items/7", "body_file": bodyFile,
                                "hash": "sha512", "encoding": "hex", "separator": "|",
                                "parts": ["timestamp", "method", "path", "nonce", "body_sha256_hex"],
                                "headers": ["signature": "X-Sig", "timestamp": "X-Time", "nonce": "X-Request-Id"]])
        try send(proxy, "https://localhost:\(origin.port)/items/7", method: "PUT", headers: headers, body: "hello")
        let defaultScheme = try sign(["key_file": keyFile, "method": "PUT", "path": "/items/7", "body_file": bodyFile])
        try send(proxy, "https://localhost:\(origin.port)/items/7", method: "PUT", headers: defaultScheme,
                 body: "hello")
        let flows = proxy.flows(count: 2)
        #expect(flows.map(\.signature)
                == [.init(valid: true, reason: nil), .init(valid: false, reason: "missing_header")])
    }

    /// The replay's re-signing: fresh timestamp and nonce, other headers kept, and a signature that
    /// Python's hmac computes the same; the re-signed request verifies where the original's nonce
    /// is already used.
    @Test func resignForReplay() throws {
        let signer = RequestSigner(key: Array("s3cr3t-key".utf8))
        let body = Array(#"{"amount": 42}"#.utf8)
        let original: [[String]] = [["Content-Type", "application/json"], ["X-Timestamp", "1"], ["X-Nonce", "OLD"],
                                    ["X-Signature", "bogus"]]
        let now = Date()
        let headers = try #require(signer.resign(method: "POST", url: "https://api.acme.dev/pay?x=1", headers: original,
                                                 body: body, now: now, nonce: "NEW-NONCE"))
        #expect(headers.first == ["Content-Type", "application/json"])
        #expect(headers.contains(["X-Timestamp", String(Int(now.timeIntervalSince1970))]))
        #expect(headers.contains(["X-Nonce", "NEW-NONCE"]))
        #expect(headers.filter { $0[0] == "X-Signature" }.count == 1)
        let signature = try #require(headers.first { $0[0] == "X-Signature" }?[1])
        let script = """
            import base64, hashlib, hmac
            body = b'{"amount": 42}'
            message = "\\n".join(["POST", "/pay", "x=1", "\(Int(now.timeIntervalSince1970))", "NEW-NONCE",
                                  base64.b64encode(hashlib.sha256(body).digest()).decode()]).encode()
            print(base64.b64encode(hmac.new(b"s3cr3t-key", message, hashlib.sha256).digest()).decode())
            """
        let python = try Subprocess.run("python3", ["-c", script])
        #expect(python.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == signature)

        let verifier = try SignatureVerifier(rules: [SignatureRule(pattern: GlobPattern("api.acme.dev"),
                                                                   signer: signer)])
        let recorded = Flow.Body(size: body.count, sha256: Digest.sha256(body).hex, text: nil, base64: nil,
                                 truncated: false, decoded: nil)
        let request = Flow.Request(method: "POST", url: "https://api.acme.dev/pay?x=1", httpVersion: "HTTP/1.1",
                                   headers: FieldPairs(headers), body: recorded)
        #expect(verifier.verify(request, signer: signer, arrived: now) == .init(valid: true, reason: nil))
        #expect(verifier.verify(request, signer: signer, arrived: now) == .init(valid: false, reason: "nonce_reused"))
        #expect(verifier.signer(for: "api.acme.dev") != nil && verifier.signer(for: "example.com") == nil)
    }

    /// Bad input at start-up: one `error:` line and a non-zero exit.
    @Test func startUpRefusals() throws {
        let key = directory.write("k", "key")
        let md5 = directory.write("md5.json", #"{"hash": "md5"}"#)
        let notJSON = directory.write("bad.json", "hash = sha256")
        let badPart = directory.write("part.json", #"{"parts": ["method", "cookie"]}"#)
        let cases: [([String], String)] = [
            (["--verify-signature", "api.acme.dev=\(key),\(md5)"], "unknown hash \"md5\""),
            (["--verify-signature", "api.acme.dev=\(directory.file("missing.key"))"], "cannot read the signing key"),
            (["--verify-signature", "api.acme.dev=\(key),\(notJSON)"], "is not valid JSON (line 1, column 1: invalid value)"),
            (["--verify-signature", "api.acme.dev=\(key),\(badPart)"], "unknown part \"cookie\""),
            (["--verify-signature", "api.acme.dev"], "HOST_GLOB=KEYFILE"),
            (["--verify-signature", "api.acme.dev=\(key)", "--redact", "X-Signature"], "--redact X-Signature"),
        ]
        for (arguments, expected) in cases {
            let result = try Subprocess.run(Subprocess.devproxy, ["run", "--ca-dir", directory.file("ca"),
                                                                  "--listen", "127.0.0.1:0"] + arguments, timeout: 30)
            #expect(result.status != 0, "\(arguments)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("error: ") && lines[0].contains(expected),
                    "\(arguments): \(result.stderr)")
        }
    }
}
