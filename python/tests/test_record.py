"""adstore.Record: an ordered mapping whose names ignore ASCII case."""

import collections.abc
import pickle

import pytest

import adstore


def test_names_ignore_case_and_keep_first_spelling_and_order():
    r = adstore.Record(Name="x", Memory=1)
    r["MEMORY"] = 2
    r["cpus"] = 4
    assert list(r) == ["Name", "Memory", "cpus"]
    assert r["memory"] == 2 and r.get("NAME") == "x" and "CPUS" in r
    assert len(r) == 3
    del r["name"]
    assert list(r.keys()) == ["Memory", "cpus"] and "Name" not in r
    r["nAmE"] = "y"
    assert list(r.items())[-1] == ("nAmE", "y")


def test_mapping_protocol():
    r = adstore.Record({"a": 1}, B=2)
    assert isinstance(r, collections.abc.MutableMapping)
    assert r.pop("A") == 1 and r.pop("zz", 9) == 9
    assert r.setdefault("c", 3) == 3 and r.setdefault("C", 4) == 3
    r.update({"b": 20}, d=5)
    assert r.to_dict() == {"B": 20, "c": 3, "d": 5}
    c = r.copy()
    c["x"] = 1
    assert "x" not in r
    r.clear()
    assert len(r) == 0 and list(r.values()) == []


def test_equality_ignores_name_case_and_order():
    assert adstore.Record(a=1, b=2) == adstore.Record(B=2, A=1)
    assert adstore.Record(a=1) == {"A": 1}
    assert adstore.Record(a=1) != adstore.Record(a=2)
    assert adstore.Record(a=1) != {"a": 1, "A": 1}
    assert adstore.Record(a=1) != [("a", 1)]
    with pytest.raises(TypeError):
        hash(adstore.Record())


def test_parse_and_unparse():
    r = adstore.Record.parse('[ Name = "n"; Memory = 1024; Req = Memory > 5 ]')
    assert r["name"] == "n" and isinstance(r["Req"], adstore.Expr)
    assert r.unparse() == '[ Name = "n"; Memory = 1024; Req = Memory > 5 ]'
    assert pickle.loads(pickle.dumps(r)) == r


def test_bad_input():
    r = adstore.Record()
    with pytest.raises(KeyError):
        r["missing"]
    with pytest.raises(KeyError):
        r[5]
    with pytest.raises(KeyError):
        del r["missing"]
    with pytest.raises(TypeError):
        r[5] = 1
    with pytest.raises(ValueError):
        r[""] = 1
    with pytest.raises(TypeError):
        adstore.Record(5)
    with pytest.raises(TypeError):
        adstore.Record([1, 2])
    with pytest.raises(adstore.ParseError) as e:
        adstore.Record.parse("[ a = 1;\n b = ]")
    assert e.value.line == 2 and e.value.column > 0
    with pytest.raises(TypeError):
        adstore.Record.parse(b"[]")
    with pytest.raises(TypeError):
        adstore.Record(a=object()).unparse()
