"""One store from several threads; streaming SELECTs hold a batch, not the result."""

import threading
import tracemalloc

import pytest

import adstore
from conftest import machine


def run_threads(fns):
    errors = []

    def wrap(fn):
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(fn,)) for fn in fns]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_readers_and_writers_at_once(store):
    store.store(machine(i) for i in range(500))

    def writer(k):
        def run():
            for j in range(20):
                store.store([machine(1000 * k + j * 10 + i) for i in range(10)])
        return run

    def reader():
        for _ in range(20):
            n = sum(1 for _ in store.execute("SELECT Name FROM Machine"))
            assert n >= 500
            assert store.get("Machine", "m7")["Name"] == "m7"

    def evaluator():
        e = adstore.Expr("Memory * Cpus")
        for i in range(2000):
            assert e.eval(machine(i)) == 1024 * (i % 8 + 1) * (i % 4 + 1)

    def txn_user(k):
        def run():
            for j in range(10):
                with store.transaction() as tx:
                    tx.store(machine(5000 + 100 * k + j))
        return run

    run_threads([writer(1), writer(2), reader, reader, evaluator, txn_user(1), txn_user(2)])
    assert sum(1 for _ in store.execute("SELECT Name FROM Machine")) == 500 + 2 * 200 + 2 * 10
    assert store.verify()["problems"] == 0


def test_transaction_belongs_to_its_thread(store):
    tx = store.transaction()
    seen = []

    def other():
        with pytest.raises(adstore.BusyError, match="thread that began it"):
            tx.store(machine(1))
        seen.append(True)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [True]
    tx.commit()


def test_writer_waits_for_another_threads_write_transaction(store):
    tx = store.transaction()
    tx.store(machine(1))
    done = threading.Event()

    def other():
        store.store(machine(2))  # waits for tx (the GIL is released while it waits)
        done.set()

    t = threading.Thread(target=other)
    t.start()
    assert not done.wait(0.2)
    tx.commit()
    t.join()
    assert done.is_set() and store.get("Machine", "m2") is not None


def test_cursors_in_parallel_threads_and_interleaved(store):
    store.store(machine(i) for i in range(2000))
    a = store.execute("SELECT Name FROM Machine")
    b = store.execute("SELECT Name FROM Machine")
    pairs = list(zip(a, b))
    assert len(pairs) == 2000 and all(x == y for x, y in pairs)

    def count():
        assert sum(1 for _ in store.execute("SELECT * FROM Machine")) == 2000

    run_threads([count] * 4)


def test_select_streams_rows(store):
    n = 60000
    store.store({"AdType": "Machine", "Name": "m%06d" % i, "Pad": "x" * 200} for i in range(n))
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        count = 0
        for r in store.execute("SELECT * FROM Machine"):
            count += len(r["Pad"])
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.reset_peak()
        held = list(store.execute("SELECT * FROM Machine"))
        all_rows = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert count == 200 * n and len(held) == n
    # Holding every row costs tens of MB; streaming holds two batches of 512.
    assert all_rows > 20 * peak, (peak, all_rows)


def test_one_cursor_is_iterated_by_one_thread_at_a_time(store):
    store.store(machine(i) for i in range(3000))
    cur = store.execute("SELECT Name FROM Machine")
    seen, refused = [], []

    def take():
        while True:
            try:
                row = next(cur)
            except StopIteration:
                return
            except adstore.BusyError:
                refused.append(1)
                continue
            seen.append(row["Name"])

    run_threads([take, take, take])
    # every row exactly once, whichever thread took it; nobody waited forever
    assert sorted(seen) == sorted("m%d" % i for i in range(3000))
