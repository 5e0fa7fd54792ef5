"""adstore.Store, Transaction and Cursor: every method, with good and bad input."""

import datetime as dt
import json
import os

import pytest

import adstore
from conftest import MACHINE_TYPE, machine


def test_open_errors(tmp_path):
    with pytest.raises(adstore.NotFoundError):
        adstore.open(str(tmp_path / "none"), create=False)
    with pytest.raises(adstore.NotFoundError):
        adstore.open(str(tmp_path / "none"), readonly=True)
    with pytest.raises(TypeError):
        adstore.open(5)
    with pytest.raises(adstore.InvalidError):
        adstore.open(str(tmp_path / "x"), map_size=-1)
    (tmp_path / "file").write_text("not a store")
    with pytest.raises(adstore.Error):
        adstore.open(str(tmp_path / "file"))


def test_store_get_history(store):
    assert store.store([machine(i) for i in range(10)]) == 10
    assert store.store(machine(3, Memory=1)) == 1
    got = store.get("Machine", "m3")
    assert got["Memory"] == 1 and got["name"] == "m3"
    assert store.get("machine", "nope") is None
    hist = store.history("Machine", "m3")
    assert [h["Memory"] for h in hist] == [4096, 1]
    assert all(isinstance(h["_Timestamp"], dt.datetime) for h in hist)
    assert [h["__Latest"] for h in hist] == [False, True]
    assert store.history("Machine", "nope") == []
    t = store.get("Machine", "m3", timeline=True)
    assert t["_Deleted"] is False


def test_store_bad_input(store):
    with pytest.raises(adstore.NotFoundError, match="Nope"):
        store.get("Nope", "x")
    with pytest.raises(adstore.InvalidError, match="key"):
        store.get("Machine", ("a", "b"))
    with pytest.raises(TypeError, match="not a value"):
        store.get("Machine", adstore.Expr("1"))
    with pytest.raises(TypeError):
        store.get(5, "x")
    with pytest.raises(adstore.Error):
        store.store({"Name": "no type"})
    with pytest.raises(adstore.NotFoundError):
        store.store({"AdType": "Undeclared", "Name": "x"})
    with pytest.raises(TypeError):
        store.store(5)
    with pytest.raises(TypeError):
        store.store([1])
    with pytest.raises(adstore.InvalidError):
        store.store([], batch=-1)
    # a failing record stops the load; what came before it was committed
    with pytest.raises(adstore.Error):
        store.store([machine(1), {"AdType": "Machine"}], batch=1)
    assert store.get("Machine", "m1") is not None
    with pytest.raises(ZeroDivisionError):
        store.store(machine(i) if i < 3 else 1 / 0 for i in range(5))


def test_execute_select_and_writes(store):
    store.store(machine(i) for i in range(100))
    rows = list(store.execute("SELECT Name, Memory FROM Machine WHERE Memory > 7000 ORDER BY Name"))
    assert [r["Name"] for r in rows] == sorted("m%d" % i for i in range(100) if 1024 * (i % 8 + 1) > 7000)
    assert rows[0].to_dict() == {"Name": "m14", "Memory": 7168}
    c = store.execute("SELECT Name AS N FROM Machine LIMIT 2")
    assert len(list(c)) == 2 and c.columns == ("N",) and c.rowcount == 2 and c.kind == "select"
    u = store.execute('UPDATE Machine SET Cpus = 99 WHERE Name == "m1"')
    assert u.kind == "update" and u.rowcount == 1 and list(u) == []
    assert store.get("Machine", "m1")["Cpus"] == 99
    d = store.execute('DELETE FROM Machine WHERE Name == "m2"')
    assert d.rowcount == 1 and store.get("Machine", "m2") is None
    assert store.get("Machine", "m2", deleted=True)["Name"] == "m2"
    hidden = next(store.execute("SELECT * FROM Machine LIMIT 1", hidden=True))
    assert "_Timestamp" in hidden


def test_execute_bad_input(store):
    with pytest.raises(adstore.ParseError) as e:
        store.execute("SELECT * FORM Machine")
    assert e.value.line == 1 and e.value.column == 10
    with pytest.raises(adstore.NotFoundError):
        list(store.execute("SELECT * FROM Nope"))
    assert isinstance(adstore.NotSupportedError("x"), NotImplementedError)
    assert list(store.execute("SELECT * FROM Machine", [])) == []
    with pytest.raises(TypeError):
        store.execute(b"SELECT 1")
    with pytest.raises(TypeError):
        store.execute("SELECT * FROM Machine", 5)


def test_cursor_closed_early_stops_the_statement(store):
    store.store(machine(i) for i in range(3000))
    c = store.execute("SELECT * FROM Machine")
    first = next(c)
    assert first["Name"] == "m0"
    c.close()
    with pytest.raises(StopIteration):
        next(c)
    # a cursor dropped half way lets the store close
    c = store.execute("SELECT * FROM Machine")
    next(c)
    del c
    store.close()
    assert store.closed


def test_cursor_holds_the_store_open(store):
    c = store.execute("SELECT * FROM Machine")
    with pytest.raises(adstore.BusyError):
        store.close()
    assert list(c) == []
    store.close()
    with pytest.raises(adstore.Error, match="closed"):
        store.get("Machine", "m1")
    with pytest.raises(adstore.Error, match="closed"):
        store.execute("SELECT * FROM Machine")


def test_transactions_commit_abort_and_context(store):
    with store.transaction() as tx:
        assert tx.store(machine(1)) is True
        assert tx.get("Machine", "m1")["Name"] == "m1"
    assert store.get("Machine", "m1") is not None
    with pytest.raises(RuntimeError):
        with store.transaction() as tx:
            tx.store(machine(2))
            raise RuntimeError("boom")
    assert store.get("Machine", "m2") is None
    tx = store.transaction()
    tx.store(machine(3))
    tx.abort()
    assert not tx.active and store.get("Machine", "m3") is None
    with pytest.raises(adstore.Error, match="ended"):
        tx.store(machine(3))
    with store.transaction() as tx:
        assert tx.delete("Machine", "m1") is True
        assert tx.delete("Machine", "m1") is False
        assert len(tx.history("Machine", "m1")) == 2
        assert tx.new_ids("increment", 2)[0].kind == "increment"
        assert len(tx.new_fluids(7, 3)) == 3
    with store.transaction(readonly=True) as ro:
        with pytest.raises(adstore.ReadOnlyError):
            ro.store(machine(4))
        assert ro.get("Machine", "m1", deleted=True)["_Deleted"] if False else True


def test_write_in_the_thread_holding_a_write_transaction_is_refused(store):
    with store.transaction() as tx:
        with pytest.raises(adstore.BusyError, match="write transaction"):
            store.store(machine(1))
        with pytest.raises(adstore.BusyError):
            store.execute('UPDATE Machine SET X = 1')
        assert store.get("Machine", "m1") is None  # reads are fine
        tx.store(machine(1))
    assert store.store(machine(2)) == 1


def test_ids_and_sequences(store):
    ids = store.new_ids("ordered", 3)
    assert len(ids) == 3 and ids[0] < ids[1] < ids[2] and ids[0].kind == "ordered"
    assert store.new_ids("random")[0].kind == "random"
    a, b = store.new_ids("increment", 2)
    assert int(b) == int(a) + 1
    f = store.new_fluids(5, 2)
    assert f[1] > f[0] and adstore.fluid_fields(f[0])[1] == 5
    assert isinstance(store.next_value("random"), adstore.Id)
    with pytest.raises(adstore.InvalidError):
        store.new_ids("sideways")
    with pytest.raises(adstore.InvalidError):
        store.new_ids("ordered", 0)
    with pytest.raises(adstore.RangeError):
        store.new_fluids(20000)
    with pytest.raises(adstore.NotFoundError):
        store.next_value("no-such-sequence")


def test_fluid_codec():
    for enc in ["dec", "hex", "dothex", "f58", "f58plain", "words", "emoji"]:
        text = adstore.fluid_encode(6731191091817518, enc)
        assert adstore.fluid_decode(text) == 6731191091817518
        assert adstore.fluid_decode(text, enc) == 6731191091817518
    with pytest.raises(adstore.InvalidError):
        adstore.fluid_encode(1, "roman")
    with pytest.raises(adstore.Error):
        adstore.fluid_decode("0xZZ")
    with pytest.raises(OverflowError):
        adstore.fluid_encode(-1)


def test_import_dump_verify(store, tmp_path):
    long_path = tmp_path / "in.long"
    long_path.write_text("".join('AdType = "Machine"\nName = "l%d"\nMemory = %d\n\n' % (i, i) for i in range(50)))
    assert store.import_file(str(long_path)) == 50
    js = tmp_path / "in.json"
    js.write_text(json.dumps([{"AdType": "Machine", "Name": "j%d" % i} for i in range(5)]))
    assert store.import_file(js, format="json") == 5
    noext = tmp_path / "records"
    noext.write_text('[ AdType = "Machine"; Name = "c1" ]\n')
    assert store.import_file(noext) == 1
    assert store.get("Machine", "l7")["Memory"] == 7
    res = store.dump(tmp_path / "all.dump")
    assert res["rows"] >= 56 and res["bytes"] == os.path.getsize(tmp_path / "all.dump")
    text = store.dump(tmp_path / "t.dump", "text", types=["Machine"])
    assert text["rows"] >= 56
    v = store.verify()
    assert v["problems"] == 0 and v["messages"] == [] and v["records"] >= 56
    other = adstore.open(str(tmp_path / "other"))
    assert other.import_file(tmp_path / "all.dump") == res["rows"]
    assert other.get("Machine", "l7")["Memory"] == 7
    other.close()


def test_import_dump_bad_input(store, tmp_path):
    with pytest.raises(adstore.SystemCallError, match="No such file"):
        store.import_file(tmp_path / "missing.long")
    with pytest.raises(adstore.InvalidError, match="unknown format"):
        store.import_file(tmp_path / "x", format="yaml")
    bad = tmp_path / "bad.classad"
    bad.write_text('[ AdType = "Machine"; Name = "b1" ]\n[ AdType = ; ]\n')
    with pytest.raises(adstore.ParseError) as e:
        store.import_file(bad)
    assert e.value.line == 2
    with pytest.raises(adstore.SystemCallError):
        store.dump(tmp_path / "no" / "such" / "dir" / "x.dump")
    with pytest.raises(adstore.InvalidError):
        store.dump(tmp_path / "x.dump", "yaml")
    with pytest.raises(TypeError):
        store.dump(tmp_path / "x.dump", types="Machine")
    with pytest.raises(adstore.NotFoundError):
        store.dump(tmp_path / "x.dump", types=["Nope"])


def test_readonly_store(tmp_path, store):
    store.store(machine(1))
    path = store.path
    store.close()
    ro = adstore.open(path, readonly=True)
    assert ro.get("Machine", "m1")["Name"] == "m1"
    with pytest.raises(adstore.ReadOnlyError):
        ro.store(machine(2))
    with pytest.raises(adstore.ReadOnlyError):
        ro.transaction()
    with ro:
        pass
    assert ro.closed
