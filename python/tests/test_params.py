"""Store.execute(statement, params): values bound to ? (a sequence) or :name
(a mapping) through the C API's ads_params, never spliced into the text."""

import datetime as dt

import pytest

import adstore
from conftest import machine


def names(cursor):
    return [r["Name"] for r in cursor]


def test_positional_and_named(store):
    store.store([machine(i) for i in range(8)])
    got = names(store.execute("SELECT Name FROM Machine WHERE Memory > ? && Cpus == ? ORDER BY Name",
                              [4096, 2]))
    assert got == ["m5"]
    got = names(store.execute("SELECT Name FROM Machine WHERE Name in :set ORDER BY Name LIMIT :n",
                              {"set": ["m1", "m2", "m7"], "N": 2}))
    assert got == ["m1", "m2"]
    rows = list(store.execute("SELECT ? AS a, ? AS b, ? AS c, ? AS d, ? AS e",
                              (1.5, True, None, "x", dt.timedelta(seconds=90))))
    assert rows[0]["a"] == 1.5 and rows[0]["b"] is True and rows[0]["d"] == "x"
    assert "c" not in rows[0] or rows[0]["c"] is None
    assert rows[0]["e"] == dt.timedelta(seconds=90)


def test_writes_take_parameters(store):
    c = store.execute("STORE [ AdType = \"Machine\"; Name = :n; Memory = :m ]", {"n": "z", "m": 7})
    assert c.rowcount == 1
    c = store.execute("UPDATE Machine SET Memory = ? WHERE Name == ?", [8, "z"])
    assert c.rowcount == 1
    assert store.get("Machine", "z")["Memory"] == 8


def test_a_string_is_a_value_never_text(store):
    store.store([machine(1)])
    evil = 'm1"; DELETE FROM Machine; //'
    assert names(store.execute("SELECT Name FROM Machine WHERE Name == ?", [evil])) == []
    assert list(store.execute("SELECT :s AS s", {"s": evil}))[0]["s"] == evil
    assert names(store.execute("SELECT Name FROM Machine")) == ["m1"]


def test_conditional_operator_unchanged(store):
    store.store([machine(1)])
    rows = list(store.execute("SELECT Memory > ? ? \"big\" : \"small\" AS s FROM Machine", [1]))
    assert rows[0]["s"] == "big"


def test_bad_params(store):
    with pytest.raises(adstore.InvalidError) as e:
        list(store.execute("SELECT Name FROM Machine WHERE Name == ? || Name == ?", ["a"]))
    assert "no value bound to parameter ?2" in str(e.value)
    assert e.value.line == 1 and e.value.column == 53
    with pytest.raises(adstore.InvalidError, match="no placeholder"):
        list(store.execute("SELECT 1 AS one", {"x": 1}))
    with pytest.raises(adstore.InvalidError, match="not both"):
        list(store.execute("SELECT ? + :x AS y", {"x": 1}))
    with pytest.raises(adstore.InvalidError, match="LIMIT's parameter"):
        list(store.execute("SELECT Name FROM Machine LIMIT ?", ["2"]))
    with pytest.raises(adstore.InvalidError, match="not a parameter name"):
        store.execute("SELECT :x AS y", {"1x": 1})
    with pytest.raises(TypeError):
        store.execute("SELECT ? AS y", "a")
    with pytest.raises(TypeError):
        store.execute("SELECT :x AS y", {1: 2})
    with pytest.raises(TypeError):
        store.execute("SELECT ? AS y", [object()])


def test_transaction_statements_point_to_transaction(store):
    for stmt in ("BEGIN", "COMMIT", "ROLLBACK"):
        with pytest.raises(adstore.NotSupportedError, match="store.transaction"):
            store.execute(stmt)


def test_a_name_given_twice_ignoring_case_is_refused(store):
    with pytest.raises(adstore.InvalidError, match=r"params: :A is given twice \(names ignore case\)"):
        store.execute("SELECT :a AS x", {"a": 1, "A": 2})
    rows = list(store.execute("SELECT :a AS x, :b AS y", {"a": 1, "B": 2}))
    assert rows[0]["x"] == 1 and rows[0]["y"] == 2
