@testable import DevProxy
import Foundation
import Testing
import TestSupport

/// Offline switched on from the web UI (`PUT /api/throttle`) while things flow through `devproxy
/// run`: what flows on the connections it covers is cut as a lost network cuts it, so an app's
/// reconnect and resume paths can be tried: an HTTP/1.1 download mid-body (curl fails), a live
/// WebSocket (the client sees its connection reset, no Close frame), a tunnel, an HTTP/2 stream
/// (httpx fails before the next event). Each cut flow says `offline`, with the bytes relayed so
/// far; a download to a host `hosts` leaves out goes on, and back online a new request works at
/// once. Before, what was flowing went on.
@Suite(.serialized) struct OfflineCutTests {
    /// `devproxy run` with its web UI, logging to `dir`/flows.jsonl, with `extra` arguments, and
    /// the Python lines that define `throttle(profile, hosts=None)`: a `PUT /api/throttle`.
    func webProxy(_ dir: TemporaryDirectory, _ extra: [String]) throws -> (DevProxyProcess, String) {
        let proxy = try DevProxyProcess(["--ca-dir", dir.file("ca"), "--web", "127.0.0.1:0", "--log",
                                         dir.file("flows.jsonl"), "--quiet"] + extra,
                                        environment: ["DEVPROXY_EMAIL": "dev@example.test"], webUI: true)
        let (base, token) = DevProxyProcess.webAPI(try #require(proxy.webUI))
        let python = """
            import json, os, socket, ssl, subprocess, sys, time, urllib.request
            def throttle(profile, hosts=None):
                body = {"profile": profile}
                if hosts is not None: body["hosts"] = hosts
                request = urllib.request.Request("\(base)/api/throttle", method="PUT", data=json.dumps(body).encode(),
                    headers={"Authorization": "Bearer \(token)", "Content-Type": "application/json"})
                return json.load(urllib.request.urlopen(request, timeout=10))["throttle"]
            def wait_for_size(path, size, limit=10):
                deadline = time.monotonic() + limit
                while time.monotonic() < deadline:
                    if os.path.exists(path) and os.path.getsize(path) >= size: return True
                    time.sleep(0.05)
                return False
            def finish(process, limit):
                # (exit status, stderr, seconds it took); still running at `limit`: killed, "running".
                start = time.monotonic()
                try:
                    process.wait(timeout=limit)
                except subprocess.TimeoutExpired:
                    process.kill(); process.wait()
                    return ["running", "", limit]
                return [process.returncode, process.stderr.read(), time.monotonic() - start]

            """
        return (proxy, python)
    }

    /// Runs a Python script (`webProxy`'s lines and more) that prints one JSON object; its output when it does not.
    func run(_ script: String) throws -> [String: Any] {
        let result = try Subprocess.run("python3", ["-c", script], timeout: 90)
        return try #require((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any],
                            "\(result.output)")
    }

    /// Two plain-HTTP downloads stall after 40 KiB (origin.py's `/drip`, waiting for its gate):
    /// Offline for `localhost` cuts the one to localhost (curl: the connection reset, at once),
    /// the one to 127.0.0.1 goes on and completes once its gate opens; back online, a new request
    /// to localhost is answered. The cut flow says `offline`, with its 200 and the 40 KiB so far.
    @Test func aDownloadIsCutAndAnotherHostGoesOn() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer(tls: false)
        let (proxy, prelude) = try webProxy(dir, [])
        defer { _ = proxy.stop() }
        let client = ["-x", "http://127.0.0.1:\(proxy.port)"]
        let drip = "/drip?kb=40&gate=\(dir.path)/"
        let out = try cutOneOfTwo(dir, prelude, covered: client + ["http://localhost:\(origin.port)\(drip)covered.gate"],
                                  other: client + ["http://127.0.0.1:\(origin.port)\(drip)other.gate"],
                                  fresh: client + ["http://localhost:\(origin.port)/headers"])
        try expectCutOneOfTwo(out, dir, proxy, listener: "regular", other: "127.0.0.1")
    }

    /// A WebSocket through the proxy (intercepted, to origin.py's `/ws` echo) that answered one
    /// message: Offline cuts it, and the client reads a reset (Python's ssl reports some as an
    /// end) without a Close frame, not a timeout. Then a tunnel (`--passthrough`): curl downloading through it fails at once.
    @Test func aWebSocketAndATunnelAreCut() throws {
        let dir = TemporaryDirectory()
        let origin = try OriginServer()
        let (proxy, prelude) = try webProxy(dir, ["--upstream-ca", origin.caPath, "--passthrough", "origin.test",
                                                  "--resolve", "origin.test:\(origin.port):127.0.0.1"])
        var stopped = false
        defer { if !stopped { _ = proxy.stop() } }
        let script = prelude + """
            s = socket.create_connection(("127.0.0.1", \(proxy.port)), timeout=10)
            s.sendall(b"CONNECT localhost:\(origin.port) HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\n\\r\\n")
            assert s.recv(1024).startswith(b"HTTP/1.1 200")
            t = ssl.create_default_context(cafile="\(dir.file("ca/root.pem"))").wrap_socket(s, server_hostname="localhost")
            t.sendall(b"GET /ws HTTP/1.1\\r\\nHost: localhost\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n")
            head = b""
            while b"\\r\\n\\r\\n" not in head: head += t.recv(1)
            mask = b"abcd"
            t.sendall(bytes([0x81, 0x83]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(b"one")))
            out = {"upgrade": head.split(b"\\r\\n")[0].decode(), "echo": t.recv(1024)[2:].decode()}
            throttle("offline")
            t.settimeout(5)
            start = time.monotonic()
            try:
                data = t.recv(1024)
                out["ws"] = "close frame" if data[:1] == b"\\x88" else ("ended" if not data else "data")
            except socket.timeout:
                out["ws"] = "timeout"
            except (ConnectionResetError, ssl.SSLError) as error:
                out["ws"] = "reset"
            if out["ws"] == "ended": out["ws"] = "reset"   # Python's ssl reads a reset as an end, when it does not raise
            out["ws_seconds"] = time.monotonic() - start
            throttle(None)
            # The tunnel: origin.test is passed through (`--resolve` takes it to the origin).
            tunnel = subprocess.Popen(["curl", "-sS", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", "\(origin.caPath)",
                                       "-o", "\(dir.path)/tunnel",
                                       "--max-time", "40",
                                       "https://origin.test:\(origin.port)/drip?kb=40&gate=\(dir.path)/never"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            out["tunnel_flowing"] = wait_for_size("\(dir.path)/tunnel", 40960)
            throttle("offline")
            out["tunnel"] = finish(tunnel, 8)
            throttle(None)
            sys.stdout.write(json.dumps(out))
            """
        let out = try run(script)
        #expect(out["upgrade"] as? String == "HTTP/1.1 101 Switching Protocols" && out["echo"] as? String == "echo:one",
                "\(out)")
        #expect(out["ws"] as? String == "reset" && (out["ws_seconds"] as? Double ?? 99) < 3, "\(out)")
        #expect(out["tunnel_flowing"] as? Bool == true, "\(out)")
        let tunnel = out["tunnel"] as? [Any]
        #expect(tunnel?.first as? Int == 56 && (tunnel?.last as? Double ?? 99) < 5, "\(out)")
        _ = proxy.stop()
        stopped = true
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        let webSocket = flows.first { $0.mode == .websocket }
        #expect(webSocket?.error?.kind == "offline" && webSocket?.throttle == "offline"
                && webSocket?.websocket?.count == 2, "\(String(describing: webSocket?.error)) \(webSocket?.websocket?.count ?? -1)")
        let tunnelFlow = flows.first { $0.mode == .tunnel }
        #expect(tunnelFlow?.error?.kind == "offline" && tunnelFlow?.throttle == "offline"
                && (tunnelFlow?.tunnel?.bytesFromServer ?? 0) > 40960,
                "\(String(describing: tunnelFlow?.error)) \(String(describing: tunnelFlow?.tunnel))")
    }

    /// An HTTP/2 event stream (hypercorn's `/events`: one event, three seconds, another) read by
    /// httpx over h2 through the proxy: Offline cuts its connection, and httpx fails reading the
    /// stream at once instead of getting the second event. The flow says `offline`, over HTTP/2.
    @Test func anHTTP2StreamIsCut() throws {
        let dir = TemporaryDirectory()
        let origin = try HTTP2Origin(.hypercornBoth)
        let (proxy, prelude) = try webProxy(dir, ["--upstream-ca", origin.caPath])
        var stopped = false
        defer { if !stopped { _ = proxy.stop() } }
        let script = prelude + """
            import httpx
            out = {}
            with httpx.Client(http2=True, proxy="http://127.0.0.1:\(proxy.port)", verify="\(dir.file("ca/root.pem"))",
                              timeout=10) as c:
                with c.stream("GET", "\(origin.url("/events"))") as r:
                    out["version"] = r.http_version
                    chunks = r.iter_raw()
                    out["first"] = next(chunks).decode()
                    throttle("offline")
                    start = time.monotonic()
                    try:
                        out["rest"] = b"".join(chunks).decode()
                    except httpx.HTTPError as error:
                        out["rest"] = "failed: " + type(error).__name__
                    out["seconds"] = time.monotonic() - start
            sys.stdout.write(json.dumps(out))
            """
        let out = try run(script)
        #expect(out["version"] as? String == "HTTP/2" && (out["first"] as? String)?.hasPrefix("data:") == true, "\(out)")
        #expect((out["rest"] as? String)?.hasPrefix("failed") == true && (out["seconds"] as? Double ?? 99) < 2.5, "\(out)")
        _ = proxy.stop()
        stopped = true
        let flows = try FlowLogReader.read(path: dir.file("flows.jsonl")).flows
        let events = flows.first { $0.request?.url.hasSuffix("/events") == true }
        #expect(events?.error?.kind == "offline" && events?.throttle == "offline" && events?.response?.status == 200,
                "\(flows.map { ($0.request?.url, $0.error) })")
    }
}
