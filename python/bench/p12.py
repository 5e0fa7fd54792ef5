#!/usr/bin/env python3
"""P12: adstore's Python module against the standard library's sqlite3.

Two measurements over N HTCondor-like machine records (default 1,000,000):

  store:  N Python dicts stored. adstore: Store.store() of the dicts into a
          store opened with nosync=True (one sync when it closes). sqlite3:
          executemany() of (Name, json.dumps(dict)) into a table with a
          primary key, in one transaction, then commit (one sync).
  select: every row of a SELECT turned into Python objects and one field
          read from each. adstore: iterating Store.execute("SELECT * FROM
          Machine") (Records). sqlite3: iterating SELECT doc and
          json.loads() of each.

Prints a table of wall and CPU seconds (the process's, every thread), rows
per second of wall time and the ratios (sqlite3 time / adstore time: above 1
means adstore is faster; on a loaded machine the CPU ratio is the steadier).
Usage:

  python3 python/bench/p12.py [--n N] [--dir DIR]

with PYTHONPATH pointing at the adstore package (build/python).
"""

import argparse
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time

import adstore

STATES = ["Unclaimed", "Claimed", "Owner", "Matched"]
ACTIVITIES = ["Idle", "Busy", "Suspended", "Vacating"]


def machines(n, seed=12):
    rnd = random.Random(seed)
    for i in range(n):
        yield {
            "AdType": "Machine",
            "Name": "slot%d@node%05d.example.org" % (i % 8 + 1, i // 8),
            "Memory": rnd.choice([2048, 4096, 8192, 16384, 32768]),
            "Cpus": rnd.choice([1, 2, 4, 8]),
            "Disk": rnd.randrange(1, 1 << 30),
            "LoadAvg": round(rnd.random() * 4, 3),
            "KeyboardIdle": rnd.randrange(0, 100000),
            "State": rnd.choice(STATES),
            "Activity": rnd.choice(ACTIVITIES),
            "Arch": "X86_64",
            "OpSys": "LINUX",
            "HasGPU": rnd.random() < 0.1,
        }


def timed(fn):
    """(wall seconds, CPU seconds of the process, fn's result)."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - t0, time.process_time() - c0), out


def run_adstore(path, n):
    with adstore.open(path, nosync=True) as s:
        list(s.execute('STORE [AdType = "Type"; ForType = "Machine"; KeyAttributes = { "Name" }]'))
        dicts = list(machines(n))
        t_store, stored = timed(lambda: s.store(dicts))
        assert stored == n, stored
        del dicts

        def select():
            total = 0
            for r in s.execute("SELECT * FROM Machine"):
                total += r["Memory"]
            return total

        t_select, total = timed(select)
    return t_store, t_select, total


def run_sqlite(path, n):
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE machine (name TEXT PRIMARY KEY, doc TEXT NOT NULL)")
    dicts = list(machines(n))

    def store():
        with conn:
            conn.executemany("INSERT INTO machine VALUES (?, ?)",
                             ((d["Name"], json.dumps(d)) for d in dicts))

    t_store, _ = timed(store)
    del dicts

    def select():
        total = 0
        for (doc,) in conn.execute("SELECT doc FROM machine"):
            total += json.loads(doc)["Memory"]
        return total

    t_select, total = timed(select)
    conn.close()
    return t_store, t_select, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="records (default 1000000)")
    ap.add_argument("--dir", default=None, help="where the stores go (default: a temp dir)")
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="p12-", dir=args.dir)
    try:
        a_store, a_select, a_total = run_adstore(os.path.join(base, "adstore.db"), args.n)
        s_store, s_select, s_total = run_sqlite(os.path.join(base, "sqlite.db"), args.n)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if a_total != s_total:
        sys.exit("p12: the two SELECTs disagree: %d against %d" % (a_total, s_total))
    n = args.n
    print("P12, %d records (Python %s)" % (n, sys.version.split()[0]))
    print("| %-6s | %9s | %9s | %9s | %9s | %14s | %14s | %10s | %9s |" % (
        "", "adstore s", "sqlite3 s", "adstore cpu", "sqlite3 cpu", "adstore rows/s",
        "sqlite3 rows/s", "wall ratio", "cpu ratio"))
    for name, a, s in (("store", a_store, s_store), ("select", a_select, s_select)):
        print("| %-6s | %9.3f | %9.3f | %11.3f | %11.3f | %14.0f | %14.0f | %9.2fx | %8.2fx |" % (
            name, a[0], s[0], a[1], s[1], n / a[0], n / s[0], s[0] / a[0], s[1] / a[1]))


if __name__ == "__main__":
    main()
