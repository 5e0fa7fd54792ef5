"""Reference counting: a million calls leave no memory behind.

Measured as the process's resident memory (ru_maxrss does not shrink, so
/proc/self/statm) after a warm-up and after a million calls, with the
allocator's free lists flushed; a leak of even 16 bytes per call would show
as 16 MB.
"""

import datetime as dt
import gc
import os

import pytest

import adstore
from conftest import machine

CALLS = 1_000_000
SLACK = 8 * 1024 * 1024  # bytes: arenas and free lists, not per-call leaks


def rss():
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def grows(fn, calls=CALLS):
    for _ in range(calls // 20):
        fn()
    before = rss()
    for _ in range(calls):
        fn()
    return rss() - before


pytestmark = pytest.mark.skipif(os.environ.get("ADSTORE_SANITIZE") == "1",
                                reason="ASan's allocator keeps freed memory (quarantine)")


def test_eval_and_conversions_do_not_leak():
    e = adstore.Expr("{ A, B + 1, [c = S] }")
    rec = {"A": [1, "x", None], "B": 2.5, "S": "text", "T": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
           "D": dt.timedelta(seconds=3), "Blob": b"bytes", "Id": adstore.Id("#7")}
    assert grows(lambda: e.eval(rec)) < SLACK


def test_records_and_errors_do_not_leak():
    def work():
        r = adstore.Record(Name="x", MEMORY=1)
        r["memory"] = 2
        try:
            adstore.Expr("1 +")
        except adstore.ParseError:
            pass
        return r.unparse()
    assert grows(work) < SLACK


def test_store_calls_do_not_leak(store):
    store.store(machine(i) for i in range(100))
    assert grows(lambda: store.get("Machine", "m5"), 200_000) < SLACK
    assert grows(lambda: list(store.execute('SELECT * FROM Machine WHERE Name == "m5"')), 20_000) < SLACK


def test_select_rows_do_not_leak(store):
    store.store(machine(i, Tags=[i, "t"]) for i in range(100))

    def work():
        for r in store.execute("SELECT * FROM Machine"):
            if r["Memory"] > 4096:  # half the rows get a dict of their own
                r["new"] = r["tags"]
    assert grows(work, 5_000) < SLACK


def test_the_measure_sees_a_leak_of_a_few_bytes_per_call():
    kept = []
    assert grows(lambda: kept.append(0.5 + len(kept))) > SLACK  # a float and a slot: 32 bytes
