#!/usr/bin/env python3
"""Turns bench/run's results.jsonl into one Markdown table of medians; used by bench/run.

usage: summarize.py RESULTS.jsonl META.json > results.md
Each line of RESULTS.jsonl is one measurement: {"target", "cell", "rep", "load": devproxy-load's
--json object or null, "proc": procstat.py's object or null}, or {"target", "cell": "idle_rss",
"rss_kib"}. META.json says how the run was made (reps, durations, versions, unavailable targets).
Every figure is the median over the repetitions of its cell.
"""
import json
import statistics
import sys

TARGETS = [("direct", "direct nginx"), ("devproxy", "DevProxy"), ("mitmdump", "mitmdump")]

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
meta = json.load(open(sys.argv[2]))


def values(target, cell, pick):
    out = []
    for row in rows:
        if row["target"] != target or row["cell"] != cell:
            continue
        try:
            value = pick(row)
        except (KeyError, TypeError):
            continue
        if value is not None:
            out.append(value)
    return out


def median(target, cell, pick):
    found = values(target, cell, pick)
    return statistics.median(found) if found else None


def load(key, sub=None):
    if sub:
        return lambda row: row["load"][key][sub]
    return lambda row: row["load"][key]


def proc(key, scale=1.0):
    return lambda row: row["proc"][key] * scale


MIB = 1 / 1024
# (cell, label, picker, unit, higher_is_better, has_direct)
METRICS = [
    ("ka1", "keep-alive 100 B, 1 conn: req/s", load("req_per_s"), "{:.0f}", True),
    ("ka1", "keep-alive 100 B, 1 conn: p50 latency (ms)", load("latency_ms", "p50"), "{:.3f}", False),
    ("ka1", "keep-alive 100 B, 1 conn: p50 added latency vs direct (ms)", "added_p50", "{:.3f}", False),
    ("ka1", "keep-alive 100 B, 1 conn: p99 latency (ms)", load("latency_ms", "p99"), "{:.3f}", False),
    ("ka16", "keep-alive 100 B, 16 conn: req/s", load("req_per_s"), "{:.0f}", True),
    ("ka16", "keep-alive 100 B, 16 conn: p99 latency (ms)", load("latency_ms", "p99"), "{:.3f}", False),
    ("ka16", "keep-alive 100 B, 16 conn: proxy CPU (% of a core)", proc("cpu_percent"), "{:.0f}", False),
    ("ka16", "keep-alive 100 B, 16 conn: generator CPU (% of a core)", load("cpu_percent"), "{:.0f}", False),
    ("new8", "new connection per GET, 8 at once: req/s", load("req_per_s"), "{:.0f}", True),
    ("new8", "new connection per GET, 8 at once: p50 (ms)", load("latency_ms", "p50"), "{:.2f}", False),
    ("new8", "new connection per GET, 8 at once: proxy CPU (%)", proc("cpu_percent"), "{:.0f}", False),
    ("newhost", "new connection to a new host name each (leaf minted), 8 at once: req/s", load("req_per_s"), "{:.0f}", True),
    ("newhost", "new connection to a new host name each, 8 at once: p50 (ms)", load("latency_ms", "p50"), "{:.2f}", False),
    ("newhost", "new host: p50 added vs new connections to one host (ms)", "new_host_p50", "{:.2f}", False),
    ("new1", "new connection per GET, one at a time: p50 (ms)", load("latency_ms", "p50"), "{:.2f}", False),
    ("newhost1", "new connection to a new host name each, one at a time: p50 (ms)", load("latency_ms", "p50"), "{:.2f}", False),
    ("newhost1", "new host, one at a time: p50 added vs new connections to one host (ms)", "new_host1_p50", "{:.2f}", False),
    ("stream", "stream {stream}: MB/s", load("mb_per_s"), "{:.0f}", True),
    ("stream", "stream {stream}: time to first byte (ms)", load("ttfb_ms"), "{:.2f}", False),
    ("stream", "stream {stream}: proxy peak RSS (MiB)", proc("peak_rss_kib", MIB), "{:.1f}", False),
    ("idle_rss", "idle proxy RSS after start-up (MiB)", lambda row: row["rss_kib"] * MIB, "{:.1f}", False),
    ("idle1000", "1,000 idle CONNECT+TLS conns: proxy peak RSS (MiB)", proc("peak_rss_kib", MIB), "{:.1f}", False),
    ("idle1000", "1,000 idle CONNECT+TLS conns: established", load("established"), "{:.0f}", True),
    # HTTP/2 and gRPC: "direct" is nghttpd (h2ka16, h2stream) or the grpcio echo server (grpc).
    ("h2ka16", "h2 keep-alive 100 B, 16 conn x 10 streams: req/s (direct: nghttpd)", load("req_per_s"), "{:.0f}", True),
    ("h2ka16", "h2 keep-alive 100 B, 16 x 10: p99 latency (ms)", load("latency_ms", "p99"), "{:.3f}", False),
    ("h2ka16", "h2 keep-alive 100 B, 16 x 10: proxy CPU (% of a core)", proc("cpu_percent"), "{:.0f}", False),
    ("h2ka16", "h2 keep-alive 100 B, 16 x 10: generator CPU (% of a core)", load("cpu_percent"), "{:.0f}", False),
    ("h2stream", "h2 stream {stream}: MB/s (direct: nghttpd)", load("mb_per_s"), "{:.0f}", True),
    ("h2stream", "h2 stream {stream}: time to first byte (ms)", load("ttfb_ms"), "{:.2f}", False),
    ("h2stream", "h2 stream {stream}: proxy peak RSS (MiB)", proc("peak_rss_kib", MIB), "{:.1f}", False),
    ("grpc", "gRPC unary calls/s, 4 conn x 10 streams (direct: grpcio server)", load("req_per_s"), "{:.0f}", True),
    ("grpc", "gRPC unary: p50 latency (ms)", load("latency_ms", "p50"), "{:.2f}", False),
    ("grpc", "gRPC unary: proxy CPU (% of a core)", proc("cpu_percent"), "{:.0f}", False),
    ("h2stall", "h2, 100 streams x 10 MiB, no window granted: proxy peak RSS (MiB)", proc("peak_rss_kib", MIB), "{:.1f}", False),
    ("h2stall", "h2, 100 stalled streams: proxy RSS added by the cell (MiB)", "stall_growth", "{:.1f}", False),
    ("h2stall", "h2, 100 stalled streams: heads received and held", load("established"), "{:.0f}", True),
]


def figure(target, cell, pick):
    if pick == "added_p50":
        if target == "direct":
            return None
        mine = median(target, cell, load("latency_ms", "p50"))
        base = median("direct", cell, load("latency_ms", "p50"))
        return None if mine is None or base is None else mine - base
    if pick in ("new_host_p50", "new_host1_p50"):
        # What a host never seen before costs over a fresh connection to a known one: for a
        # proxy, minting a leaf plus a fresh upstream connection (no pooled one, no resumption).
        cells = ("newhost", "new8") if pick == "new_host_p50" else ("newhost1", "new1")
        mine = median(target, cells[0], load("latency_ms", "p50"))
        base = median(target, cells[1], load("latency_ms", "p50"))
        return None if mine is None or base is None else mine - base
    if pick == "stall_growth":
        return median(target, cell, lambda row: (row["proc"]["peak_rss_kib"] - row["proc"]["start_rss_kib"]) * MIB)
    return median(target, cell, pick)


def cell_text(value, fmt, target):
    if target in meta.get("unavailable", {}):
        return "unavailable"
    return "—" if value is None else fmt.format(value)


def ratio(a, b, fmt="{}"):
    # A denominator that shows as zero in the table (mitmdump's RSS added by the stall cell:
    # 0.004 MiB) gives a ratio that means nothing.
    if a is None or b is None or b == 0 or float(fmt.format(b)) == 0:
        return "—"
    return "{:.2f}×".format(a / b)


header = ["figure"] + [name for _, name in TARGETS] + ["DevProxy / mitmdump", "DevProxy / direct"]
lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
for cell, label, pick, fmt, _ in METRICS:
    got = {key: figure(key, cell, pick) for key, _ in TARGETS}
    texts = [cell_text(got[key], fmt, key) for key, _ in TARGETS]
    lines.append("| " + " | ".join([label.format(stream=meta["stream_label"])] + texts
                                    + [ratio(got["devproxy"], got["mitmdump"], fmt),
                                       ratio(got["devproxy"], got["direct"], fmt)]) + " |")

# DevProxy with --session off ("lean"), measured in the same run: what the session store costs.
# The main table's req/s and proxy CPU rows of the two cells it runs.
LEAN = [(cell, label, pick, fmt) for cell, label, pick, fmt, _ in METRICS
        if cell in ("ka16", "h2ka16") and ("req/s" in label or "proxy CPU" in label)]
lean_lines = []
if any(row["target"] == "lean" for row in rows):
    lean_lines = ["", "DevProxy as above and with `--session off` (no session store, no web UI), same run:", "",
                  "| figure | DevProxy | DevProxy --session off | direct | --session off / DevProxy | "
                  "--session off / direct |", "|---|---|---|---|---|---|"]
    for cell, label, pick, fmt in LEAN:
        got = {key: figure(key, cell, pick) for key in ("devproxy", "lean", "direct")}
        lean_lines.append("| " + " | ".join([label] + [cell_text(got[k], fmt, k) for k in ("devproxy", "lean", "direct")]
                                            + [ratio(got["lean"], got["devproxy"], fmt),
                                               ratio(got["lean"], got["direct"], fmt)]) + " |")

# The share of each cell's flows (warm-up included) that DevProxy's session store kept: the flow
# log has every flow, and a store whose writer cannot keep up sheds flows (and counts them).
kept = []
for cell, name in (("ka16", "HTTP/1.1 keep-alive 16 conn"), ("h2ka16", "h2 keep-alive 16 x 10"),
                   ("grpc", "gRPC unary")):
    shares = values("devproxy", cell, lambda row: 100 * row["store"]["stored"] / row["store"]["logged"])
    if shares:
        kept.append(f"{name} {statistics.median(shares):.1f} %")
if kept:
    lean_lines += ["", "Flows DevProxy's session store kept, of those its flow log has (median of the repetitions): "
                   + "; ".join(kept) + "."]

errors = []
for key, name in TARGETS:
    total = 0
    for row in rows:
        if row["target"] == key and row.get("load"):
            total += row["load"].get("errors_total", 0)
    errors.append(str(total))
lines.append("| errors, all cells and repetitions | " + " | ".join(errors) + " | | |")

print("\n".join(lines + lean_lines))
print()
print(f"Medians of {meta['reps']} repetition(s); {meta['duration']} s per cell after {meta['warmup']} s warm-up; "
      f"{meta['cores']} cores; generator `devproxy-load`, {meta['threads']} thread(s). "
      "Ratios are DevProxy's figure divided by the other's, whatever the direction of \"better\".")
names = dict(TARGETS + [("lean", "DevProxy --session off")])
for key, why in meta.get("unavailable", {}).items():
    print(f"\n{names.get(key, key)} unavailable: {why}")
shown = set()
for row in rows:
    first = (row.get("load") or {}).get("first_error")
    if first and (row["target"], row["cell"]) not in shown:
        shown.add((row["target"], row["cell"]))
        print(f"\nfirst error, {row['target']} {row['cell']} (rep {row['rep']}): {first}")
