import CertAuthority
@testable import DevProxy
import Foundation
import Synchronization
import Testing
import TestSupport

/// An origin that sends its leaf without the intermediate that issued it: DevProxy fetches the
/// intermediate from the leaf's AIA `caIssuers` URL, as browsers do, and never takes a root from
/// there. Certificates are made with the `openssl` CLI; the origin is `origin.py` serving only its
/// leaf.
@Suite struct MissingIntermediateTests {
    /// root → intermediate → leaf (`localhost`), and an HTTP server on 127.0.0.1 for the AIA URLs
    /// that serves the files of `aia/` and counts what it was asked for.
    final class PKI: @unchecked Sendable {
        let directory = TemporaryDirectory()
        private let listener: Listener
        let aiaPort: Int
        private let requests = Mutex<[String]>([])
        private let stopped = Atomic<Bool>(false)
        private let finished = DispatchSemaphore(value: 0)

        init() throws {
            try FileManager.default.createDirectory(atPath: directory.file("aia"), withIntermediateDirectories: false)
            listener = try Listener(host: "127.0.0.1", port: 0)
            aiaPort = listener.address.port
            let thread = Thread { [self] in
                defer { finished.signal() }
                while !stopped.load(ordering: .sequentiallyConsistent) {
                    guard let socket = (try? listener.accept(timeout: 0.1)) ?? nil else { continue }
                    socket.setTimeout(5)
                    serve(socket)
                    socket.close()
                }
            }
            thread.start()
            try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "root.key",
                         "-out", "root.pem", "-subj", "/CN=AIA Test Root", "-days", "2",
                         "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
            try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "int.key",
                         "-out", "int.csr", "-subj", "/CN=AIA Test Intermediate"])
            _ = directory.write("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
            try openssl(["x509", "-req", "-in", "int.csr", "-CA", "root.pem", "-CAkey", "root.key", "-CAcreateserial",
                         "-days", "2", "-extfile", "ca.ext", "-out", "int.pem"])
            try openssl(["x509", "-in", "int.pem", "-outform", "DER", "-out", "aia/int.der"])
            try openssl(["x509", "-in", "root.pem", "-outform", "DER", "-out", "aia/root.der"])
            // The "certs-only" PKCS #7 some CAs serve (`application/pkcs7-mime`, a .p7c file).
            try openssl(["crl2pkcs7", "-nocrl", "-certfile", "int.pem", "-outform", "DER", "-out", "aia/int.p7c"])
            try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key",
                         "-out", "leaf.csr", "-subj", "/CN=localhost"])
        }

        deinit {
            stopped.store(true, ordering: .sequentiallyConsistent)
            finished.wait()
        }

        /// One request: `GET /NAME` answered with `aia/NAME`; with 302 to the URL in
        /// `aia/NAME.redirect` when there is one; else 404.
        private func serve(_ socket: Socket) {
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !head.ends(with: Array("\r\n\r\n".utf8)) {
                guard let count = try? buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }), count > 0 else { return }
                head += buffer[..<count]
            }
            let path = String(decoding: head, as: UTF8.self).split(separator: " ").dropFirst().first.map(String.init) ?? "/"
            requests.withLock { $0.append(path) }
            if let location = FileManager.default.contents(atPath: directory.file("aia") + path + ".redirect") {
                let answer = "HTTP/1.1 302 Found\r\nLocation: \(String(decoding: location, as: UTF8.self))\r\n"
                    + "Content-Length: 0\r\nConnection: close\r\n\r\n"
                try? Array(answer.utf8).withUnsafeBytes { try socket.write($0) }
                return
            }
            let file = FileManager.default.contents(atPath: directory.file("aia") + path).map { [UInt8]($0) }
            let status = file == nil ? "404 Not Found" : "200 OK"
            let body = file ?? Array("not here\n".utf8)
            let answer = Array("HTTP/1.1 \(status)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n".utf8) + body
            try? answer.withUnsafeBytes { try socket.write($0) }
        }

        var rootPath: String { directory.file("root.pem") }
        var keyPath: String { directory.file("leaf.key") }
        func url(_ name: String) -> String { "http://127.0.0.1:\(aiaPort)/\(name)" }

        /// A leaf for `localhost` issued by `issuer` (`int` or `root`), naming `aia` as its issuer's URL.
        func leaf(_ file: String, issuer: String = "int", aia: String?) throws -> String {
            let aiaLine = aia.map { "authorityInfoAccess=caIssuers;URI:\($0)\n" } ?? ""
            _ = directory.write("\(file).ext", "subjectAltName=DNS:localhost\n" + aiaLine)
            try openssl(["x509", "-req", "-in", "leaf.csr", "-CA", "\(issuer).pem", "-CAkey", "\(issuer).key", "-CAcreateserial",
                         "-days", "2", "-extfile", "\(file).ext", "-out", file])
            return directory.file(file)
        }

        /// How many times `name` was asked for.
        func downloads(of name: String) -> Int {
            requests.withLock { $0.filter { $0 == "/" + name }.count }
        }

        func openssl(_ arguments: [String]) throws {
            let result = try Subprocess.run("openssl", arguments, directory: directory.path, timeout: 30)
            guard result.status == 0 else { throw TestFailure("openssl \(arguments.joined(separator: " ")): \(result.output)") }
        }
    }

    private func proxy(trusting pki: PKI) throws -> ProxyHarness {
        let root = try Certificate.all(from: SecureFile.read(pki.rootPath, what: "root"))
        return try ProxyHarness(configure: { $0.upstreamCAs = root; $0.http2 = false })
    }

    @Test func theMissingIntermediateIsFetchedOnceAndTheFlowsSaySo() throws {
        let pki = try PKI()
        let leaf = try pki.leaf("leaf-aia.pem", aia: pki.url("int.der"))
        // The chain is sound when the intermediate is at hand, and incomplete without it.
        let verify = try Subprocess.run("openssl", ["verify", "-CAfile", pki.rootPath, "-untrusted", pki.directory.file("int.pem"), leaf])
        #expect(verify.status == 0, "\(verify.output)")
        #expect(try Subprocess.run("openssl", ["verify", "-CAfile", pki.rootPath, leaf]).status != 0)
        let origin = try OriginServer(certificate: (leaf, pki.keyPath))
        let proxy = try proxy(trusting: pki)
        for _ in 0..<2 {
            // A new client connection each time, hence a new origin connection.
            let result = try proxy.curl(["-w", "%{http_code}", "-o", "/dev/null", origin.url("/cl?n=3")])
            #expect(result.stdout == "200", "\(result.output)")
        }
        let flows = proxy.flows(count: 2)
        #expect(flows.count == 2)
        for flow in flows {
            #expect(flow.tls?.upstream?.verified == true)
            #expect(flow.tls?.upstream?.fetchedIssuer == pki.url("int.der"))
            #expect(flow.tls?.upstream?.chain.count == 1, "the origin sent its leaf alone")
        }
        #expect(pki.downloads(of: "int.der") == 1)
    }

    /// With `--upstream-proxy`, the intermediate is fetched through it too (absolute-form, with the
    /// proxy's credentials): the origin's TLS goes through untouched (passthrough) and the download
    /// is a plain HTTP flow of the upstream proxy's.
    @Test func throughAnUpstreamProxyTheDownloadGoesThroughItWithItsCredentials() throws {
        let pki = try PKI()
        let origin = try OriginServer(certificate: (try pki.leaf("leaf-aia.pem", aia: pki.url("int.der")), pki.keyPath))
        let credential = ProxyCredential(user: "qa", password: "s3cret")
        let upstream = try ProxyHarness(configure: {
            $0.passthrough = [GlobPattern("localhost")]
            $0.proxyCredentials = [credential]
        })
        let root = try Certificate.all(from: SecureFile.read(pki.rootPath, what: "root"))
        let front = try ProxyHarness(configure: {
            $0.upstreamCAs = root
            $0.upstreamProxy = try! UpstreamProxy(url: ModeURL(parsing: upstream.proxyURL, what: "test"),
                                                  authorization: UpstreamProxy.basicAuthorization(credential))
        })
        let result = try front.curl(["-w", "%{http_code}", "-o", "/dev/null", origin.url("/cl?n=3")])
        #expect(result.stdout == "200", "\(result.output)")
        #expect(front.flows(count: 1).first?.tls?.upstream?.fetchedIssuer == pki.url("int.der"))
        let deadline = Date().addingTimeInterval(10)
        while !upstream.sink.flows.contains(where: { $0.mode == .http }) && Date() < deadline { usleep(10_000) }
        let download = upstream.sink.flows.first { $0.mode == .http }
        #expect(download?.request?.url == pki.url("int.der"))
        #expect(download?.response?.status == 200)
        #expect(pki.downloads(of: "int.der") == 1)
    }

    /// The intermediate served as a certs-only PKCS #7 (.p7c), as some CAs publish theirs.
    @Test func anIntermediateServedAsPKCS7IsTaken() throws {
        let pki = try PKI()
        let origin = try OriginServer(certificate: (try pki.leaf("leaf-p7c.pem", aia: pki.url("int.p7c")), pki.keyPath))
        let proxy = try proxy(trusting: pki)
        let result = try proxy.curl(["-w", "%{http_code}", "-o", "/dev/null", origin.url("/cl?n=3")])
        #expect(result.stdout == "200", "\(result.output)")
        #expect(proxy.flows(count: 1).first?.tls?.upstream?.fetchedIssuer == pki.url("int.p7c"))
    }

    @Test func aLeafThatNamesNoURLGets502SayingWhatToDo() throws {
        let pki = try PKI()
        let origin = try OriginServer(certificate: (try pki.leaf("leaf-plain.pem", aia: nil), pki.keyPath))
        let proxy = try proxy(trusting: pki)
        let result = try proxy.curl([origin.url("/cl?n=3")])
        #expect(result.stdout == "502 Bad Gateway: upstream certificate verify failed: unable to get local issuer certificate: "
                + "the origin did not send the certificate that issued CN = localhost (issuer: CN = AIA Test Intermediate), "
                + "and its certificate names no URL to fetch it from (AIA caIssuers): give that CA certificate with "
                + "--upstream-ca FILE\n", "\(result.output)")
        #expect(proxy.flows(count: 1).first?.error?.kind == "upstream_certificate_invalid")
    }

    /// A `caIssuers` URL that redirects (a CA that moved its files) is followed to another http
    /// URL, relative or absolute; the flow names the URL the certificate gave.
    @Test func aRedirectIsFollowed() throws {
        let pki = try PKI()
        _ = pki.directory.write("aia/moved.der.redirect", "/int.der")
        _ = pki.directory.write("aia/moved-twice.der.redirect", pki.url("moved.der"))
        let origin = try OriginServer(certificate: (try pki.leaf("leaf-moved.pem", aia: pki.url("moved-twice.der")), pki.keyPath))
        let proxy = try proxy(trusting: pki)
        let result = try proxy.curl(["-w", "%{http_code}", "-o", "/dev/null", origin.url("/cl?n=3")])
        #expect(result.stdout == "200", "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.tls?.upstream?.fetchedIssuer == pki.url("moved-twice.der"))
        #expect(pki.downloads(of: "moved-twice.der") == 1 && pki.downloads(of: "moved.der") == 1 && pki.downloads(of: "int.der") == 1)
    }

    /// A redirect to https (no TLS is made to fetch a CA's certificate) or a loop ends in a 502
    /// that says so.
    @Test func aRedirectToHTTPSOrALoopIsNamedInThe502() throws {
        let pki = try PKI()
        _ = pki.directory.write("aia/secure.der.redirect", "https://127.0.0.1:\(pki.aiaPort)/int.der")
        _ = pki.directory.write("aia/loop.der.redirect", "/loop.der")
        for (name, reason) in [("secure.der", "\(pki.url("secure.der")) redirects to https://127.0.0.1:\(pki.aiaPort)/int.der, "
                                 + "and only http:// URLs are fetched"),
                               ("loop.der", "more than 3 redirects")] {
            let origin = try OriginServer(certificate: (try pki.leaf("leaf-\(name).pem", aia: pki.url(name)), pki.keyPath))
            let proxy = try proxy(trusting: pki)
            let result = try proxy.curl([origin.url("/cl?n=3")])
            #expect(result.stdout.hasSuffix("and fetching it from \(pki.url(name)) failed: \(reason)\n"), "\(result.output)")
        }
        #expect(pki.downloads(of: "loop.der") == 4, "the first request and three redirects")
    }

    @Test func aFailedDownloadIsNamedInThe502() throws {
        let pki = try PKI()
        let origin = try OriginServer(certificate: (try pki.leaf("leaf-404.pem", aia: pki.url("missing.der")), pki.keyPath))
        let proxy = try proxy(trusting: pki)
        let result = try proxy.curl([origin.url("/cl?n=3")])
        #expect(result.stdout.hasSuffix("and fetching it from \(pki.url("missing.der")) failed: the server answered 404\n"),
                "\(result.output)")
    }

    /// An intermediate that chains to no trusted root is not kept: in the store it would be looked
    /// up first for every chain naming its subject and key identifier (a look-alike of a real CA's
    /// intermediate, served by an origin, would break every site that CA signs).
    @Test func anIntermediateThatChainsToNoTrustedRootIsNotKept() throws {
        let pki = try PKI()
        let origin = try OriginServer(certificate: (try pki.leaf("leaf-aia.pem", aia: pki.url("int.der")), pki.keyPath))
        let other = try PKI()
        let proxy = try proxy(trusting: other)
        let result = try proxy.curl([origin.url("/cl?n=3")])
        #expect(result.stdout.hasSuffix("the certificate at \(pki.url("int.der")) (CN = AIA Test Intermediate) does not "
                                        + "verify itself: unable to get local issuer certificate\n"), "\(result.output)")
        // Asked again, the same (the cached refusal): nothing was added that would let it through.
        #expect(try proxy.curl([origin.url("/cl?n=3")]).stdout == result.stdout)
    }

    /// A self-signed certificate at the URL, the one that really issued the leaf, is a root: taken
    /// into the store it would be trusted. It is refused, every time.
    @Test func aRootAtTheURLIsNeverTrusted() throws {
        let pki = try PKI()
        let origin = try OriginServer(certificate: (try pki.leaf("leaf-by-root.pem", issuer: "root", aia: pki.url("root.der")),
                                                    pki.keyPath))
        // The proxy trusts some other root, not this one.
        let other = try PKI()
        let proxy = try proxy(trusting: other)
        for _ in 0..<2 {
            let result = try proxy.curl([origin.url("/cl?n=3")])
            #expect(result.stdout.hasSuffix("the certificate at \(pki.url("root.der")) is a root: only intermediates are "
                                            + "taken from the origin's side\n"), "\(result.output)")
        }
    }
}
