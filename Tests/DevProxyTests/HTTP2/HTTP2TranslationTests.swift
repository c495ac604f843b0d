import CertAuthority
@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Responses translated between HTTP/1.1 and HTTP/2 keep what the other version can carry:
/// a response without content (RFC 9110 §6.4.1: to HEAD, 204, 304) ends with its HEADERS frame,
/// and trailers an h2 origin announced reach an HTTP/1.1 client in a chunked trailer section; an
/// origin whose framing lies is said in the flow whichever version the client speaks.
@Suite(.serialized) struct HTTP2TranslationTests {
    /// An HTTP/1.1-only origin's `304` with `Content-Length: 1234` (RFC 9110 §8.6 allows it) to an
    /// h2 client (Python h2): the HEADERS frame ends the stream. An empty DATA frame with
    /// END_STREAM after it made Python h2 fail the connection ("Expected 1234 bytes, received 0"),
    /// since RFC 9113 §8.1.1 exempts only a response that has no content from its length.
    @Test func a304WithALengthEndsWithItsHeadersForAnH2Client() throws {
        let (origin, proxy, files) = try Self.http1OriginAndProxy()
        defer { origin.stop(); _ = files }
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/304", extra: ["--then", "/204"])
        #expect(json.responses.map(\.status) == [304, 204] && json.goaway == nil, "\(json)")
        #expect(json.responses.first?.headers.contains(["content-length", "1234"]) == true, "\(json)")
        let flows = proxy.flows(count: 2)
        #expect(flows.map { $0.response?.status } == [304, 204] && flows.allSatisfy { $0.error == nil }, "\(flows)")
    }

    /// An h2-only origin's response with `content-length: 5`, `trailer: x-checksum` and that
    /// trailer after its body, to an HTTP/1.1 client (curl --http1.1 --raw): chunked, its last
    /// chunk carrying the trailer, no Content-Length beside Transfer-Encoding (RFC 9112 §6.1).
    /// It went out framed by its length, and the trailer the flow showed never reached the client.
    @Test func announcedTrailersFromAnH2OriginReachAnHTTP1Client() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let result = try proxy.curl(["--http1.1", "-i", "--raw", origin.url("/trailers")])
        let text = result.stdout.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(text.contains("\nTransfer-Encoding: chunked\n") && !text.lowercased().contains("content-length"),
                "\(result.output)")
        #expect(text.hasSuffix("\n\n5\nhello\n0\nx-checksum: 5d41402a\n\n"), "\(result.output)")
        let flow = try #require(proxy.flows(count: 1).first)
        #expect(flow.response?.trailers?.flat.contains("5d41402a") == true, "\(flow)")
    }

    /// An HTTP/1.1 origin that sends more than its `Content-Length` (5, then "hello world" in one
    /// write): the client gets the 5 bytes, over HTTP/1.1 or h2, and the flow says what the origin
    /// did (`upstream_bad_response`, by the server: how many bytes followed the response's end, and
    /// that they were dropped with the connection, RFC 9112 §6.3). It said nothing.
    @Test func bytesPastAResponsesLengthAreSaidInTheFlow() throws {
        let (origin, proxy, files) = try Self.http1OriginAndProxy()
        defer { origin.stop(); _ = files }
        let result = try proxy.curl(["--http1.1", "https://localhost:\(origin.port)/more"])
        #expect(result.stdout == "hello", "\(result.output)")
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/more")
        #expect(json.responses.first?.status == 200 && json.responses.first?.body == "hello", "\(json)")
        let flows = proxy.flows(count: 2)
        #expect(flows.count == 2, "\(flows)")
        for flow in flows {
            #expect(flow.response?.status == 200 && flow.response?.body?.size == 5, "\(flow)")
            #expect(flow.error?.kind == "upstream_bad_response" && flow.error?.by == "server", "\(String(describing: flow.error))")
            #expect(flow.error?.message.contains("6 bytes after the end of its response (Content-Length: 5)") == true,
                    "\(String(describing: flow.error))")
        }
    }

    /// An HTTP/1.1 origin that closes 5 bytes into the 50 its `Content-Length` declared: the
    /// client's response is cut (curl: "transfer closed"; Python h2: the stream reset), and the
    /// flow says the same, `upstream_closed` after 5 bytes, whichever version the client speaks.
    /// An h2 client's flow said `upstream_bad_response`, an HTTP/1.1 client's `upstream_closed`.
    @Test func aResponseShortOfItsLengthIsRecordedAlikeForEitherClient() throws {
        let (origin, proxy, files) = try Self.http1OriginAndProxy()
        defer { origin.stop(); _ = files }
        let result = try proxy.curl(["--http1.1", "https://localhost:\(origin.port)/fewer"])
        #expect(result.stdout == "hello" && result.output.contains("transfer closed"), "\(result.output)")
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/fewer")
        #expect(json.responses.first?.body == "hello" && json.responses.first?.reset != nil, "\(json)")
        let flows = proxy.flows(count: 2)
        #expect(flows.count == 2, "\(flows)")
        for flow in flows {
            #expect(flow.error?.kind == "upstream_closed"
                    && flow.error?.message.contains("connection closed before the message was complete after 5") == true,
                    "\(String(describing: flow.error))")
        }
    }

    /// An h2 origin that sends a PUSH_PROMISE after it acknowledged DevProxy's SETTINGS_ENABLE_PUSH
    /// 0 (RFC 9113 §6.6: a connection error): the h2 client gets a 502 whose `X-DevProxy-Error`
    /// and reason are the flow's, naming the push; the flow said "on this stream: Protocol error"
    /// as `upstream_bad_response` while the client was told `upstream_closed`.
    @Test func aPushFromAnOriginThatWasToldNotToIsAnsweredAndRecordedAlike() throws {
        let origin = try HTTP2Origin(.misbehaving)
        let cas = try Certificate.all(from: SecureFile.read(origin.caPath, what: "ca"))
        let proxy = try ProxyHarness(configure: { $0.upstreamCAs = cas })
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/push")
        let answer = try #require(json.responses.first, "\(json)")
        #expect(answer.status == 502 && answer.body.contains("PUSH_PROMISE"), "\(json)")
        let flow = try #require(proxy.flows(count: 1).first)
        let kind = answer.headers.first { $0.first == "x-devproxy-error" }?.last
        #expect(flow.error?.kind == kind && flow.error?.message.contains("PUSH_PROMISE") == true,
                "\(String(describing: flow.error)) vs \(json)")
    }

    /// An h2 client's request (`:authority`, no `host`) to an HTTP/1.1-only origin: `Host` is the
    /// first field of the translated head (RFC 9110 §7.2: a user agent sends it first; curl and
    /// browsers do), the client's fields after it, cookie crumbs joined (RFC 9113 §8.2.3). It came last.
    @Test func theTranslatedHeadNamesItsHostFirst() throws {
        let (origin, proxy, files) = try Self.http1OriginAndProxy()
        defer { origin.stop(); _ = files }
        let json = try H2Client.run(proxy: proxy, port: origin.port, alpn: "h2", path: "/echo",
                                    extra: ["x-first=1", "cookie=a=1", "cookie=b=2", "x-last=2"])
        let lines = (json.responses.first?.body ?? "").components(separatedBy: "\r\n")
        #expect(Array(lines.prefix(3)) == ["GET /echo HTTP/1.1", "Host: localhost:\(origin.port)", "x-first: 1"], "\(json)")
        #expect(lines.contains("cookie: a=1; b=2") && lines.contains("x-last: 2")
                && lines.filter { $0.lowercased().hasPrefix("host:") }.count == 1, "\(json)")
    }

    /// An HTTP/1.1 origin over TLS (ALPN `http/1.1` only) and a proxy that trusts it. /304: `304`
    /// with `Content-Length: 1234` and an ETag; /204: `204`; /more: `Content-Length: 5` and 11
    /// bytes; /fewer: `Content-Length: 50`, 5 bytes, then the connection closed; /echo: the request head as
    /// it arrived; anything else `200` "ok".
    static func http1OriginAndProxy() throws -> (BackgroundServer, ProxyHarness, TemporaryDirectory) {
        try BackgroundServer.tlsOriginAndProxy(script: Self.http1Origin, caName: "Translation Origin CA")
    }

    static let http1Origin = #"""
    import socket, ssl, sys, threading
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); tls.load_cert_chain(sys.argv[1], sys.argv[2])
    tls.set_alpn_protocols(["http/1.1"])
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
    print(s.getsockname()[1], flush=True)
    answers = {b"/304": b"HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\nETag: \"v1\"\r\n\r\n",
               b"/204": b"HTTP/1.1 204 No Content\r\n\r\n",
               b"/more": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello world",
               b"/fewer": b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhello"}
    def serve(c):
        c = tls.wrap_socket(c, server_side=True)
        data = b""
        while True:
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk:
                    c.close(); return
                data += chunk
            head, data = data.split(b"\r\n\r\n", 1)
            path = head.split(b"\r\n")[0].split(b" ")[1]
            if path == b"/echo":
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(head), head))
                continue
            c.sendall(answers.get(path, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
            if path == b"/fewer":
                c.close(); return
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
    """#
}
