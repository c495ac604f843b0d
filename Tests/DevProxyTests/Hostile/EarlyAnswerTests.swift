import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// An HTTP/1.1 origin that answers before the request body is in (RFC 9110 §10.1.1, RFC 9112
/// §9.6): the answer reaches the client as soon as it comes, not once the upload ended or the
/// origin closed; the rest of the body goes on where the origin reads on and stops where it
/// closes, and the flow says how much went up (`request.body_cut`).
@Suite(.serialized) struct EarlyAnswerTests {
    /// 4 MB sent at 1 MB/s: the upload alone takes four seconds. curl sends it without `Expect:
    /// 100-continue` (its default for a large body), as many clients do.
    static let uploadSize = 4 << 20
    static let rate = "1M"

    /// 413 with `Connection: close` after the head only, then the connection left open, unread,
    /// for five seconds: curl gets the 413 within a second or two (it waited for the origin's
    /// close), and the flow says the body was cut, how much went up and why.
    @Test func anEarlyAnswerThatClosesReachesTheClientAtOnce() throws {
        // curl stops sending on an early error: it is done once the 413 reaches it.
        let (result, waited, flow) = try curlUploadsSlowly(to: "/close")
        #expect(result.stdout == "too large\n413", "\(result.output)")
        #expect(waited < 3, "the 413 took \(waited) s to reach the client")
        #expect(flow.response?.status == 413 && flow.error == nil, "\(flow)")
        let cut = try #require(flow.request?.bodyCut, "no body_cut in \(flow)")
        #expect(cut.sent < Self.uploadSize && cut.sent <= flow.request?.body?.size ?? 0, "\(cut)")
        #expect(cut.reason.contains("answered 413") && cut.reason.contains("Connection: close"), "\(cut)")
        #expect(ConsoleFlowPrinter.line(for: flow).contains("(request body cut after"))
    }

    /// 401 after the head only, on a connection the origin keeps (it reads and drops the rest):
    /// curl gets the 401 at once (it waited for its whole upload), stops sending as it does on
    /// an early error, and the flow says the client stopped.
    @Test func anEarlyAnswerOnAKeptConnectionReachesCurlAtOnce() throws {
        let (result, waited, flow) = try curlUploadsSlowly(to: "/keep")
        #expect(result.stdout == "unauthorized\n401", "\(result.output)")
        #expect(waited < 3, "the 401 took \(waited) s to reach the client")
        #expect(flow.response?.status == 401, "\(flow)")
        #expect(flow.request?.bodyCut?.reason.contains("the client stopped sending") == true,
                "\(String(describing: flow.request?.bodyCut))")
    }

    /// curl POSTs `uploadSize` bytes at `rate` through a proxy to the origin's `path` over HTTP/1.1:
    /// what it printed (body, then the status), how long it took, and the one flow recorded.
    private func curlUploadsSlowly(to path: String) throws -> (Subprocess.Result, TimeInterval, Flow) {
        let origin = try BackgroundServer(script: Self.origin, arguments: [])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let dir = TemporaryDirectory()
        let upload = dir.write("upload.bin", bytes: [UInt8](repeating: 0x61, count: Self.uploadSize))
        let started = Date()
        let result = try proxy.curl(["--http1.1", "-X", "POST", "-H", "Expect:", "--data-binary", "@\(upload)", "--limit-rate", Self.rate,
                                     "-w", "\n%{http_code}", "http://127.0.0.1:\(origin.port)\(path)"])
        let waited = Date().timeIntervalSince(started)
        return (result, waited, try #require(proxy.flows(count: 1).first))
    }

    /// A client that reads the early 401 and then sends the rest of its body anyway: the rest goes
    /// on to the origin, which reads it, and both connections serve the next request. The 401 is
    /// read before the body is sent whole (before: the proxy sent nothing back until the body
    /// was in, and this client waited for it).
    @Test func theRestOfTheBodyGoesOnWhereTheOriginReadsOn() throws {
        let origin = try BackgroundServer(script: Self.origin, arguments: [])
        defer { origin.stop() }
        let proxy = try ProxyHarness()
        let client = try RawClient.plain(port: proxy.port, timeout: 5)
        let part = String(repeating: "a", count: 1000)
        client.send("POST http://127.0.0.1:\(origin.port)/keep HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
                    + "Content-Length: 2000\r\n\r\n" + part)
        let early = try client.readResponse()
        #expect(early.status == 401 && early.body == "unauthorized", "\(early.text)")
        client.send(part)
        client.send("POST http://127.0.0.1:\(origin.port)/count HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n"
                    + "Content-Length: 5\r\n\r\nhello")
        let next = try client.readResponse()
        #expect(next.status == 200 && next.body == "5 bytes on connection 1", "\(next.text)")
        let flows = proxy.flows(count: 2)
        let first = try #require(flows.first { $0.request?.url.hasSuffix("/keep") == true })
        #expect(first.response?.status == 401 && first.request?.bodyCut == nil, "\(first)")
        #expect(first.request?.body?.size == 2000, "\(String(describing: first.request?.body))")
    }

    /// An HTTP/2 client (Python h2, offering only h2) of an HTTP/1.1-only origin that answers 413
    /// with `Connection: close` after the head, then leaves the body unread for five seconds: the
    /// client gets the 413 at once (it waited for the origin's close), its stream then told to stop.
    @Test func anH2ClientOfAnHTTP1OriginGetsTheEarlyAnswerAtOnce() throws {
        let (origin, proxy, files) = try Self.tlsOriginAndProxy()
        defer { origin.stop(); _ = files }
        let started = Date()
        // Said to be gzip, and not: a cut body is recorded as the bytes that went, undecoded, as
        // on the HTTP/1.1 path (a decode of a cut stream would be an error or a partial text).
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/close",
                                    extra: ["--body-size", "\(Self.uploadSize)", "content-encoding=gzip"])
        let waited = Date().timeIntervalSince(started)
        #expect(json.responses.first?.status == 413 && json.responses.first?.body == "too large", "\(json)")
        #expect(waited < 3, "the 413 took \(waited) s to reach the client")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == 413, "\(flow)")
        // As for an HTTP/1.1 client: how much went up, and why no more did.
        let cut = try #require(flow.request?.bodyCut, "no body_cut in \(flow)")
        #expect(cut.sent < Self.uploadSize && cut.sent <= flow.request?.body?.size ?? 0, "\(cut)")
        #expect(cut.reason == EarlyAnswerCut.closing(413) && cut.reason.contains("Connection: close"), "\(cut)")
        let body = try #require(flow.request?.body)
        #expect(body.decoded == nil && body.decodeError == nil, "a cut body was decoded: \(body)")
        #expect(ConsoleFlowPrinter.line(for: flow).contains("(request body cut after"))
    }

    /// An HTTP/2 client that sends its POST's head and then waits before any of the body (Python
    /// h2, `--hold-body`): the origin's 413 (`Connection: close`) or 401 (kept) reaches it at once,
    /// and the flow says none of the body went up. Before, the stream's thread waited for the client's next DATA
    /// and never looked at the origin, so this client heard nothing (the 413's origin closed after
    /// five seconds, still unheard).
    @Test(arguments: [("/close", 413), ("/keep", 401)])
    func anH2ClientThatPausesMidUploadGetsTheAnswerAtOnce(_ path: String, _ status: Int) throws {
        let (origin, proxy, files) = try Self.tlsOriginAndProxy()
        defer { origin.stop(); _ = files }
        let started = Date()
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: path, extra: ["--hold-body"])
        let waited = Date().timeIntervalSince(started)
        #expect(json.responses.first?.status == status, "\(json)")
        #expect(waited < 3, "the \(status) took \(waited) s to reach the client")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.status == status && flow.request?.bodyCut?.sent == 0, "\(flow)")
    }

    /// `origin` over TLS (a leaf for localhost from a CA of its own, in a directory kept as long
    /// as the origin is) and a proxy that trusts it.
    private static func tlsOriginAndProxy() throws -> (BackgroundServer, ProxyHarness, TemporaryDirectory) {
        try BackgroundServer.tlsOriginAndProxy(script: Self.origin, caName: "Early Answer Origin CA")
    }

    /// Plain HTTP/1.1 on 127.0.0.1:0 (TLS with CERT KEY as arguments). POST /close: 413 with `Connection: close` after the head,
    /// then five seconds with the body unread before it closes. POST /keep: 401 after the head,
    /// then it reads and drops the body and serves the connection's next request. Anything else:
    /// 200 "N bytes on connection C" once the body is read (C counts the connections accepted).
    static let origin = #"""
    import itertools, socket, ssl, sys, threading, time
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
    print(s.getsockname()[1], flush=True)
    connections = itertools.count(1)
    tls = None
    if len(sys.argv) > 2:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); tls.load_cert_chain(sys.argv[1], sys.argv[2])
        tls.set_alpn_protocols(["http/1.1"])
    def serve(c, number):
        if tls:
            c = tls.wrap_socket(c, server_side=True)
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk:
                    c.close(); return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            lines = head.split(b"\r\n")
            path = lines[0].split(b" ")[1]
            length = next((int(l.split(b":", 1)[1]) for l in lines[1:] if l.lower().startswith(b"content-length:")), 0)
            if path == b"/close":
                c.sendall(b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo large")
                time.sleep(5); c.close(); return
            if path == b"/keep":
                c.sendall(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\nWWW-Authenticate: Basic\r\n\r\nunauthorized")
            while len(data) < length:
                chunk = c.recv(65536)
                if not chunk:
                    c.close(); return
                data += chunk
            body, data = data[:length], data[length:]
            if path != b"/keep":
                text = b"%d bytes on connection %d" % (len(body), number)
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text))
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c, next(connections)), daemon=True).start()
    """#
}
