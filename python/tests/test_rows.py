"""Records a SELECT streams: split records (values in a tuple, names shared by
the rows of one layout) that behave as any other Record."""

import pickle

import pytest

import adstore
from conftest import machine

LONG = "A" + "x" * 80  # longer than the names a Cursor keeps (ADS_PY_NAME_CACHE_LEN)


def rows(store, stmt="SELECT * FROM Machine"):
    return list(store.execute(stmt))


def test_rows_read_as_records(store):
    store.store(machine(i, Arch="X86_64", Load=0.5, Gpu=(i == 1), Tags=["a", i]) for i in range(3))
    got = rows(store)
    want = [adstore.Record(machine(i, Arch="X86_64", Load=0.5, Gpu=(i == 1), Tags=["a", i]))
            for i in range(3)]
    assert got == want and all(type(r) is adstore.Record for r in got)
    r = got[1]
    # stored order: sorted by case-folded name
    assert list(r) == ["AdType", "Arch", "Cpus", "Gpu", "Load", "Memory", "Name", "Tags"]
    assert len(r) == 8 and r["Name"] == "m1" and r["memory"] == 2048 and r.get("GPU") is True
    assert "tags" in r and "Tags" in r and "nope" not in r and r.get("nope", 7) == 7
    assert r["Tags"] == ["a", 1] and r["Load"] == 0.5
    assert r.to_dict() == machine(1, Arch="X86_64", Load=0.5, Gpu=True, Tags=["a", 1])
    assert list(r.values())[-2:] == ["m1", ["a", 1]]
    assert pickle.loads(pickle.dumps(r)) == r and r.copy() == r
    assert repr(r).startswith("adstore.Record({'AdType': 'Machine'")
    with pytest.raises(KeyError):
        r["nope"]
    with pytest.raises(KeyError):
        r[5]


def test_changing_a_row_leaves_the_rows_that_share_its_names_alone(store):
    store.store(machine(i) for i in range(4))
    a, b, c, d = rows(store)
    a["MEMORY"] = 1
    a["Extra"] = "x"
    del b["cpus"]
    assert c.pop("name") == "m2" and c.setdefault("Cpus", 9) == 3
    d.update(Memory=5, New=6)
    assert list(a) == ["AdType", "Cpus", "Memory", "Name", "Extra"] and a["memory"] == 1
    assert list(b) == ["AdType", "Memory", "Name"] and len(b) == 3
    assert list(c) == ["AdType", "Cpus", "Memory"]
    assert d.to_dict() == {"AdType": "Machine", "Cpus": 4, "Memory": 5, "Name": "m3", "New": 6}
    fresh = rows(store)
    assert fresh == [adstore.Record(machine(i)) for i in range(4)]
    fresh[0].clear()
    assert len(fresh[0]) == 0 and fresh[1]["Name"] == "m1"


def test_rows_of_different_names_in_one_select(store):
    recs = [machine(0), machine(1, Disk=10), machine(2), machine(3, **{LONG: 1}), machine(4),
            machine(5, Disk=11), {"AdType": "Machine", "Name": "m6"}, machine(7)]
    store.store(recs)
    got = rows(store)
    assert [r.to_dict() for r in got] == [dict(sorted(r.items(), key=lambda kv: kv[0].lower()))
                                          for r in recs]
    assert got[3][LONG.lower()] == 1 and len(got[3]) == 5 and LONG not in got[4]
    assert got[1]["disk"] == 10 and "Disk" not in got[2] and got[6] == {"Name": "m6", "AdType": "Machine"}


def test_rows_go_back_into_the_store_and_into_expressions(store):
    store.store(machine(i) for i in range(3))
    got = rows(store)
    got[0]["Memory"] = 100
    assert store.store(got) == 3
    assert store.get("Machine", "m0")["Memory"] == 100
    assert adstore.Expr("Memory * 2 + Cpus").eval(got[1]) == 2 * 2048 + 2
    assert adstore.Record(got[2]) == got[2] and got[2] == machine(2)


def test_select_list_rows_are_records_too(store):
    store.store(machine(i) for i in range(3))
    got = rows(store, "SELECT Name, Memory * 2 AS M FROM Machine")
    assert got == [{"Name": "m%d" % i, "M": 2048 * (i % 8 + 1)} for i in range(3)]
    got[0]["m"] = 0
    assert got[0] == {"Name": "m0", "M": 0} and got[1]["M"] == 4096


def test_a_row_with_a_name_too_long_to_keep_between_rows_of_one_layout(store):
    # m1's long name leaves the Cursor's names of m0 and m2 alike where it
    # stands: m2 must still get its own names, not m0's
    recs = [{"AdType": "Machine", "Name": "m0", "B": 1, "Q": 2},
            {"AdType": "Machine", "Name": "m1", "B" + LONG: 3, "Z": 4},
            {"AdType": "Machine", "Name": "m2", "B": 5, "Z": 6}]
    store.store(recs)
    got = rows(store)
    assert [list(r) for r in got] == [["AdType", "B", "Name", "Q"], ["AdType", "B" + LONG, "Name", "Z"],
                                      ["AdType", "B", "Name", "Z"]]
    assert got == recs and got[2]["z"] == 6 and "Q" not in got[2]


def test_a_plain_select_and_one_that_runs_whole_give_the_same_records(store):
    # a plain SELECT reads its rows' stored bytes (prepared statements); one
    # with ORDER BY goes through records in a worker thread: the same values
    values = [None, adstore.ERROR, True, -3, 2.5, float("inf"), "", "é\u2603", [1, [2, "x"]],
              {"a": 1, "B": {"c": None}}, adstore.Expr("Memory * 2"), b"\x00\xff"]
    store.store(machine(i, V=values[i % len(values)], _Hidden=i) for i in range(600))
    plain = rows(store, "SELECT * FROM Machine")
    sorted_ = rows(store, "SELECT * FROM Machine ORDER BY Name")
    assert len(plain) == 600 and sorted(plain, key=lambda r: r["Name"]) == sorted_
    assert all("_Hidden" not in r for r in plain)
    hidden = list(store.execute("SELECT * FROM Machine", hidden=True))
    assert hidden[0]["_Hidden"] == 0 and "_Timestamp" in hidden[0]
    picked = rows(store, "SELECT Name, V, Memory + 1 AS m FROM Machine")
    # a select item is evaluated: the stored expression gives its value
    assert [r.get("V") for r in picked] == [
        p["Memory"] * 2 if isinstance(p.get("V"), adstore.Expr) else p.get("V") for p in plain]
    assert all(r["m"] == p["Memory"] + 1 for r, p in zip(picked, plain))


def test_a_cursor_reads_its_snapshot_across_batches(store):
    store.store(machine(i) for i in range(1500))
    cur = store.execute("SELECT Name, Memory FROM Machine")
    first = next(cur)
    store.execute("UPDATE Machine SET Memory = 1")
    store.store(machine(i) for i in range(1500, 1600))
    rest = list(cur)
    assert 1 + len(rest) == 1500 and cur.rowcount == 1500
    assert first["Memory"] != 1 and all(r["Memory"] != 1 for r in rest)
    assert cur.columns == ("Name", "Memory")
    now = rows(store, "SELECT Memory FROM Machine")
    assert len(now) == 1600 and sum(r["Memory"] == 1 for r in now) == 1500
