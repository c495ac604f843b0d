#!/usr/bin/env python3
"""Breaks a running process's resident memory down by what holds it; used to find DevProxy's RSS.

usage: memstat.py PID [--malloc] [--trim] [--json]
Reads /proc/PID/smaps and sorts every mapping's Rss into:
  binary        the executable's own file mappings (code, read-only data)
  libraries     other file-backed mappings (shared libraries, locale data)
  main heap     [heap]: glibc's main arena (brk)
  arenas        anonymous mappings glibc made for its per-thread arenas: 64 MiB regions, aligned
                to 64 MiB (HEAP_MAX_SIZE on 64-bit glibc), reserved whole and touched as used
  stacks        [stack] and anonymous mappings of a thread's stack size or smaller that sit right
                above a guard page (---p): thread stacks
  large blocks  other anonymous mappings: allocations over the mmap threshold (128 KiB at first,
                raised by glibc as such blocks are freed), and anything else mapped directly
With --malloc, also attaches gdb (batch, a second or two) to call malloc_info(0, file) in the
process and sums its XML: per arena the bytes glibc holds from the system (`total`/`mmap`) and
the free bytes inside them (what fragmentation or an untrimmed top keeps resident or reserved),
and sqlite3_memory_used() (SQLite's page caches, statements and schema, when it links libsqlite3).
With --trim, then calls malloc_trim(0) in the process (gdb again) and reads the RSS once more: what
the free chunks held that trimming gives back, as against what fragmentation keeps (pages that
hold a live block anywhere in them stay).
--json prints one JSON object instead of the table.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ARENA_SIZE = 64 * 1024 * 1024


def mappings(pid):
    """(start, end, perms, path, rss_kib) for each mapping of /proc/PID/smaps."""
    result, current = [], None
    header = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            match = header.match(line)
            if match:
                if current:
                    result.append(tuple(current))
                current = [int(match[1], 16), int(match[2], 16), match[3], match[4].strip(), 0]
            elif line.startswith("Rss:") and current:
                current[4] = int(line.split()[1])
    if current:
        result.append(tuple(current))
    return result


def breakdown(pid):
    exe = os.path.realpath(f"/proc/{pid}/exe")
    maps = mappings(pid)
    kinds = {"binary": 0, "libraries": 0, "main heap": 0, "arenas": 0, "stacks": 0, "large blocks": 0}
    counts = dict.fromkeys(kinds, 0)
    previous = None
    for start, end, perms, path, rss in maps:
        size = end - start
        if path == exe:
            kind = "binary"
        elif path == "[heap]":
            kind = "main heap"
        elif path == "[stack]":
            kind = "stacks"
        elif path.startswith("/") or (path.startswith("[") and path != ""):
            kind = "libraries"
        elif start % ARENA_SIZE == 0 and size <= ARENA_SIZE and perms.startswith("rw"):
            kind = "arenas"
        elif (previous and previous[1] == start and previous[2].startswith("---") and size <= 8 * 1024 * 1024
              and perms.startswith("rw")):
            kind = "stacks"
        else:
            kind = "large blocks"
        # An arena's unused tail is a ---p mapping after its rw part: no Rss, but count the region once.
        if kind == "large blocks" and perms.startswith("---"):
            kind = "arenas" if previous and previous[0] % ARENA_SIZE == 0 else kind
        kinds[kind] += rss
        if rss:
            counts[kind] += 1
        previous = (start, end, perms)
    with open(f"/proc/{pid}/status") as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    return {
        "rss_kib": int(status["VmRSS"].split()[0]),
        "threads": int(status["Threads"].strip()),
        "kinds_kib": kinds,
        "mappings_with_rss": counts,
    }


def malloc_summary(pid):
    """Attaches gdb and sums malloc_info's XML: arenas, bytes from the system, free bytes."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "malloc.xml")
        os.chmod(directory, 0o777)
        commands = [
            f'call (void*)fopen("{path}", "w")',
            "set $file = $",
            "call (int)malloc_info(0, $file)",
            "call (int)fclose($file)",
            'printf "sqlite3_memory_used %lld\\n", (long long)sqlite3_memory_used()',
        ]
        args = ["gdb", "-p", str(pid), "-batch", "-nx"] + sum((["-ex", c] for c in commands), [])
        output = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=60).stdout
        if not os.path.exists(path):
            return None
        root = ET.parse(path).getroot()
    sqlite = re.search(r"^sqlite3_memory_used (\d+)$", output, re.M)
    arenas = []
    for heap in root.findall("heap"):
        system = {s.get("type"): int(s.get("size")) for s in heap.findall("system")}
        total = {t.get("type"): (int(t.get("count")), int(t.get("size"))) for t in heap.findall("total")}
        arenas.append({"id": int(heap.get("nr")), "system": system.get("current", 0),
                       "free": sum(size for kind, (_, size) in total.items() if kind != "mmap")})
    totals = {t.get("type"): (int(t.get("count")), int(t.get("size"))) for t in root.findall("total")}
    system = {s.get("type"): int(s.get("size")) for s in root.findall("system")}
    return {
        "arenas": len(arenas),
        "system_bytes": system.get("current", 0),
        "free_bytes": sum(size for kind, (_, size) in totals.items() if kind != "mmap"),
        "mmapped_blocks": totals.get("mmap", (0, 0))[0],
        "mmapped_bytes": totals.get("mmap", (0, 0))[1],
        "sqlite_bytes": int(sqlite[1]) if sqlite else None,
        "per_arena": sorted(arenas, key=lambda a: -a["system"]),
    }


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    pid = int(sys.argv[1])
    result = breakdown(pid)
    if "--malloc" in sys.argv[2:]:
        result["malloc"] = malloc_summary(pid)
    if "--trim" in sys.argv[2:]:
        subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "call (int)malloc_trim(0)"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        result["rss_after_trim_kib"] = breakdown(pid)["rss_kib"]
    if "--json" in sys.argv[2:]:
        print(json.dumps(result))
        return
    mib = lambda kib: "%.1f" % (kib / 1024)
    print("RSS %s MiB, %d threads" % (mib(result["rss_kib"]), result["threads"]))
    for kind, kib in result["kinds_kib"].items():
        print("  %-13s %7s MiB  (%d mappings)" % (kind, mib(kib), result["mappings_with_rss"][kind]))
    info = result.get("malloc")
    if info:
        print("malloc: %d arenas hold %s MiB from the system, %s MiB of it free; %d blocks mmapped (%s MiB)"
              % (info["arenas"], mib(info["system_bytes"] / 1024), mib(info["free_bytes"] / 1024),
                 info["mmapped_blocks"], mib(info["mmapped_bytes"] / 1024)))
        if info["sqlite_bytes"] is not None:
            print("sqlite: %s MiB in use (sqlite3_memory_used)" % mib(info["sqlite_bytes"] / 1024))
    elif "--malloc" in sys.argv[2:]:
        print("malloc: gdb could not call malloc_info")
    if "rss_after_trim_kib" in result:
        print("after malloc_trim(0): RSS %s MiB" % mib(result["rss_after_trim_kib"]))


if __name__ == "__main__":
    main()
