#!/usr/bin/env python3
"""Samples one process's CPU time and resident memory until told to stop; used by bench/run.

usage: procstat.py PID OUT.json
Creates OUT.json.ready once sampling has started.
Every 50 ms reads /proc/PID/stat (utime+stime) and /proc/PID/status (VmRSS). On SIGTERM or
SIGINT (or after 15 minutes, or when the process exits) writes one JSON object to OUT.json:
  cpu_s        CPU seconds the process used while sampled (user+sys)
  wall_s       seconds sampled
  cpu_percent  cpu_s / wall_s * 100, i.e. share of one core
  peak_rss_kib largest VmRSS seen
  start_rss_kib VmRSS at the first sample (peak - start: what the cell added)
  last_rss_kib VmRSS at the last sample
"""
import json
import os
import signal
import sys
import time

pid, out = int(sys.argv[1]), sys.argv[2]
tick = os.sysconf("SC_CLK_TCK")
stop = False


def on_signal(signum, frame):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)


def cpu_seconds():
    with open(f"/proc/{pid}/stat") as f:
        # Fields after the ")" closing the command name: utime and stime are 14th and 15th overall.
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick


def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


start_wall, start_cpu = time.monotonic(), cpu_seconds()
peak = last = first = rss_kib()
# Tell bench/run that the signal handlers are in place, so a short cell cannot stop us unrecorded.
open(out + ".ready", "w").close()
end_cpu = start_cpu
deadline = start_wall + 900
while not stop and time.monotonic() < deadline:
    try:
        last = rss_kib()
        end_cpu = cpu_seconds()
    except (FileNotFoundError, ProcessLookupError):
        break
    peak = max(peak, last)
    time.sleep(0.05)
wall = time.monotonic() - start_wall
result = {
    "cpu_s": round(end_cpu - start_cpu, 3),
    "wall_s": round(wall, 3),
    "cpu_percent": round((end_cpu - start_cpu) / wall * 100, 1) if wall > 0 else 0,
    "peak_rss_kib": peak,
    "start_rss_kib": first,
    "last_rss_kib": last,
}
with open(out, "w") as f:
    json.dump(result, f)
