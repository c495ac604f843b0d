#!/usr/bin/env python3
"""Repeat… through the web UI's API (`POST /api/flows/ID/repeat`, `GET`/`DELETE /api/repeats/ID`),
beside a proxy the caller started (`devproxy run --web`); the script serves an origin that counts
the requests it gets, the most it held at once, and answers 429 after the first LIMIT.

Checks: count 20 concurrency 5 reaches the origin exactly 20 times, never more than 5 at once,
and the summary says 200 × LIMIT and 429 × the rest, with timings, and 20 new flows marked
`replay_of` the original; a delay spaces the sends of a lane; a cancel stops it early and nothing
more arrives; parameters out of their limits are refused (400) with the reason; an unknown flow 404.

Prints one line per check: `PASS name detail` or `FAIL name detail`; exits 1 on any failure.

Usage: webui_repeat_api.py --ui URL --proxy http://127.0.0.1:PORT
"""
import argparse, http.server, json, sys, threading, time, urllib.error, urllib.parse, urllib.request

LIMIT = 8
HOLD = 0.2


class Origin(http.server.BaseHTTPRequestHandler):
    """Counts requests and the most in flight at once (each is held HOLD seconds); answers 200 to
    the first LIMIT since the last `reset()`, 429 after."""
    protocol_version = "HTTP/1.1"
    lock = threading.Lock()
    count = 0
    current = 0
    peak = 0

    @classmethod
    def reset(cls):
        with cls.lock:
            cls.count = cls.current = cls.peak = 0

    def log_message(self, *args):
        pass

    def do_GET(self):
        with Origin.lock:
            Origin.count += 1
            Origin.current += 1
            Origin.peak = max(Origin.peak, Origin.current)
            allowed = Origin.count <= LIMIT
        time.sleep(HOLD)
        with Origin.lock:
            Origin.current -= 1
        body = b"ok" if allowed else b"slow down"
        self.send_response(200 if allowed else 429)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve_origin():
    """The origin on 127.0.0.1 port 0, serving from a thread; returns the server."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Origin)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class UI:
    """The web UI's API with its token."""

    def __init__(self, url):
        parts = urllib.parse.urlsplit(url)
        self.base = f"{parts.scheme}://{parts.netloc}"
        self.token = urllib.parse.parse_qs(parts.query)["token"][0]

    def call(self, method, path, body=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def flow_for(self, url, timeout=10):
        """The finished flow of `url` (newest), waiting up to `timeout` seconds."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            _, answer = self.call("GET", "/api/flows?limit=500")
            for flow in answer["flows"]:
                if flow.get("url") == url and flow.get("phase") == "finished" and flow.get("replay_of") is None:
                    return flow
            time.sleep(0.1)
        return None

    def finished(self, repeat_id, timeout=30):
        """The repeat's state once it no longer runs (or the last one seen after `timeout`)."""
        deadline = time.time() + timeout
        while True:
            _, state = self.call("GET", "/api/repeats/" + repeat_id)
            if state["state"] in ("done", "cancelled") or time.time() > deadline:
                return state
            time.sleep(0.1)


def send_through(proxy, url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy}))
    with opener.open(url, timeout=10) as response:
        response.read()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ui", required=True)
    parser.add_argument("--proxy", required=True)
    options = parser.parse_args()
    failed = False

    def result(name, ok, detail=""):
        nonlocal failed
        print(("PASS" if ok else "FAIL"), name, detail, flush=True)
        failed = failed or not ok

    origin = serve_origin()
    ui = UI(options.ui)
    url = f"http://127.0.0.1:{origin.server_address[1]}/limited?item=42"
    send_through(options.proxy, url)
    original = ui.flow_for(url)
    result("original-captured", original is not None)
    if original is None:
        return 1
    flow_id = original["id"]

    Origin.reset()
    status, started = ui.call("POST", f"/api/flows/{flow_id}/repeat", {"count": 20, "concurrency": 5})
    result("repeat-starts-at-once", status == 202 and started.get("state") == "running" and started.get("id"),
           repr((status, started)))
    state = ui.finished(started["id"])
    result("origin-saw-exactly-20", Origin.count == 20, f"count={Origin.count}")
    result("never-more-than-5-at-once", 2 <= Origin.peak <= 5, f"peak={Origin.peak}")
    result("summary-counts-statuses", state["state"] == "done" and state["sent"] == 20 and state["done"] == 20
           and state["statuses"] == {"200": LIMIT, "429": 20 - LIMIT} and state["errors"] == {}, repr(state))
    times = state.get("time_ms") or {}
    result("summary-has-timings", HOLD * 1000 <= times.get("min", 0) <= times.get("median", 0) <= times.get("max", 0),
           repr(times))
    _, listed = ui.call("GET", "/api/flows?limit=500")
    replays = {flow["id"] for flow in listed["flows"] if flow.get("replay_of") == flow_id}
    result("flows-marked-replay-of", len(replays) == 20 and replays == set(state["flows"]),
           f"{len(replays)} listed, {len(state['flows'])} in the summary")

    Origin.reset()
    status, spaced = ui.call("POST", f"/api/flows/{flow_id}/repeat", {"count": 3, "concurrency": 1, "delay_ms": 400})
    spaced = ui.finished(spaced["id"])
    result("delay-spaces-the-sends", spaced["done"] == 3 and spaced["elapsed_ms"] >= 2 * 400 + 3 * HOLD * 1000,
           repr(spaced))

    Origin.reset()
    status, long = ui.call("POST", f"/api/flows/{flow_id}/repeat", {"count": 200, "concurrency": 2, "delay_ms": 100})
    time.sleep(0.8)
    status, cancelling = ui.call("DELETE", "/api/repeats/" + long["id"])
    stopped = ui.finished(long["id"], timeout=10)
    seen = Origin.count
    time.sleep(0.8)
    result("cancel-stops-early", status == 200 and stopped["state"] == "cancelled" and 0 < stopped["done"] < 200
           and stopped["done"] == stopped["sent"] and Origin.count == seen == stopped["done"],
           f"origin {seen} then {Origin.count}, {stopped}")

    bad = [({"count": 0}, "count"), ({"count": 1001}, "count"), ({"count": "ten"}, "count"), ({"count": 2.5}, "count"),
           ({"count": True}, "count"), ({"concurrency": 0}, "concurrency"), ({"concurrency": 51}, "concurrency"),
           ({"delay_ms": -1}, "delay_ms"), ({"delay_ms": 60001}, "delay_ms")]
    Origin.reset()
    answers = [(body, ui.call("POST", f"/api/flows/{flow_id}/repeat", body)) for body, _ in bad]
    result("bad-parameters-400-with-reason", all(status == 400 and name in answer["error"]
                                                 for (_, name), (_, (status, answer)) in zip(bad, answers))
           and Origin.count == 0, repr(answers))
    status, answer = ui.call("POST", f"/api/flows/{flow_id}/repeat", raw=b"[1,2")
    result("not-json-400", status == 400 and "JSON object" in answer["error"], repr((status, answer)))
    status, answer = ui.call("POST", "/api/flows/no-such-flow/repeat", {"count": 2})
    result("unknown-flow-404", status == 404, repr((status, answer)))
    status, answer = ui.call("GET", "/api/repeats/no-such-repeat")
    result("unknown-repeat-404", status == 404, repr((status, answer)))
    origin.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
