#!/usr/bin/env python3
"""How many flows DevProxy's session store holds, beside how many its flow log has; used by bench/run.

usage: storecount.py SESSION.sqlite FLOWS.jsonl
Prints {"stored": N, "logged": M}. The flow log gets every flow; the session store may shed
flows when its writer cannot keep up (counted as drops), so the two together say what share of
a cell's flows the store kept. Waits (up to 10 s) until the store's count stops moving: its writer
commits in batches and may still be catching up when the load ends.
"""
import json
import sqlite3
import sys
import time


def stored(path):
    # Read-only, through the WAL: the proxy's writer keeps going meanwhile.
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
        return db.execute("SELECT count(*) FROM flows").fetchone()[0]


def logged(path):
    with open(path, "rb") as log:
        return sum(1 for _ in log)


session, log = sys.argv[1], sys.argv[2]
previous, deadline = -1, time.monotonic() + 10
count = stored(session)
while count != previous and time.monotonic() < deadline:
    time.sleep(0.3)
    previous, count = count, stored(session)
print(json.dumps({"stored": count, "logged": logged(log)}))
