"""adstore.Expr and adstore.eval: parse, evaluate in a record, unparse."""

import pytest

import adstore


def test_parse_eval_unparse():
    e = adstore.Expr("Memory * 2 >= 2048 && regexp(\"^slot\", Name)")
    assert str(e) == 'Memory * 2 >= 2048 && regexp("^slot", Name)'
    assert e.eval({"memory": 1024, "NAME": "slot1"}) is True
    assert e.eval({"Memory": 10, "Name": "slot1"}) is False
    assert e.eval() is None  # undefined
    assert adstore.Expr(str(e)) == e
    assert adstore.Expr("MEMORY") == adstore.Expr("memory")
    assert adstore.Expr("a") != adstore.Expr("b")
    assert adstore.parse("1 + 1").eval() == 2
    assert adstore.Expr(e) is e
    assert "absTime" in adstore.Expr('absTime("2024-01-01T00:00:00Z")').unparse_condor()


def test_eval_function():
    assert adstore.eval("x + y", {"x": 1, "y": 2.5}) == 3.5
    assert adstore.eval(adstore.Expr("x"), adstore.Record(X="s")) == "s"
    assert adstore.eval("1/0") is adstore.ERROR
    assert adstore.eval("{1, [a = 2].a}") == [1, 2]
    r = adstore.eval("[a = 1; b = a + 1]")
    assert isinstance(r, adstore.Record) and r["b"] == 2


def test_record_members_may_be_expressions():
    rec = {"a": 5, "b": adstore.Expr("a * 2"), "n": {"c": adstore.Expr("b + 1")}}
    assert adstore.eval("b", rec) == 10
    assert adstore.eval("n.c", rec) == 11


def test_parse_errors_carry_line_and_column():
    with pytest.raises(adstore.ParseError) as e:
        adstore.Expr("a +\n  * b")
    err = e.value
    assert isinstance(err, adstore.Error)
    assert (err.line, err.column) == (2, 3)
    assert err.code == "syntax error"
    assert str(err).startswith("line 2, column 3: ") and err.message in str(err)


@pytest.mark.parametrize("bad,exc", [
    (None, TypeError), (5, TypeError), (b"a", TypeError), ("", adstore.ParseError),
    ("(" * 100000, adstore.Error), ("a b", adstore.ParseError), ('"unterminated', adstore.ParseError),
])
def test_bad_expressions(bad, exc):
    with pytest.raises(exc):
        adstore.Expr(bad)
    with pytest.raises(exc):
        adstore.eval(bad)


def test_bad_eval_records():
    with pytest.raises(TypeError):
        adstore.eval("a", 5)
    with pytest.raises(TypeError):
        adstore.Expr("a").eval([1])
    with pytest.raises(TypeError):
        adstore.Expr("a").eval(record={1: 2})
    with pytest.raises(TypeError):
        adstore.eval("a", {"a": adstore.Expr("1")}, 3)
