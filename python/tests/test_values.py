"""ClassAd values to Python and back: every type, exact round trips, bad input."""

import datetime as dt
import math
import random

import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import adstore

UTC = dt.timezone.utc


def roundtrip(v):
    """v through a ClassAd record attribute and back, and through its text."""
    rec = adstore.Record({"v": v})
    back = adstore.eval("v", rec)
    text = adstore.Record.parse(rec.unparse())["v"]
    return back, text


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, adstore.Record) and isinstance(b, adstore.Record):
        return list(a.keys()) == list(b.keys()) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, dt.datetime):
        return a == b and a.utcoffset() == b.utcoffset()
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("v", [
    None, adstore.ERROR, True, False, 0, -1, 2**63 - 1, -2**63, 0.0, -0.0, 1.5, 1e308, -2.5e-310,
    math.inf, -math.inf, "", "héllo", "tab\tquote\"back\\slash",
    [], [1, "a", None, [2.5, adstore.ERROR]], adstore.Record(), adstore.Record(a=1, B=[1, 2]),
    dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=UTC),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
    dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.timezone(dt.timedelta(hours=14))),
    dt.datetime(1, 1, 1, tzinfo=UTC),
    dt.timedelta(0), dt.timedelta(days=-3, microseconds=1), dt.timedelta(days=12345, seconds=7),
    adstore.Id("#1"), adstore.uuid(), b"", b"\x00\xffbytes", adstore.Blob(b"xy", {"Kind": "png"}),
])
def test_value_round_trips(v):
    back, text = roundtrip(v)
    assert same(back, v), (back, v)
    assert same(text, v), (text, v)


def test_string_with_nul_round_trips_through_records_not_text():
    v = "nul\0byte"
    assert adstore.eval("v", {"v": v}) == v
    with pytest.raises(adstore.ParseError, match="NUL"):
        adstore.Record.parse(adstore.Record(v=v).unparse())


def test_nan_round_trips():
    back, text = roundtrip(math.nan)
    assert math.isnan(back) and math.isnan(text)


def test_non_utf8_string_round_trips_as_surrogates():
    s = adstore.eval('"a" + "b"')
    assert s is adstore.ERROR or isinstance(s, str)
    bad = "x\udcff\udcfey"  # bytes ff fe, not UTF-8
    back, text = roundtrip(bad)
    assert back == bad and text == bad


def test_expression_members_stay_expressions():
    rec = adstore.Record.parse("[a = 2; b = a * 3; l = {1, a}]")
    assert rec["a"] == 2
    assert isinstance(rec["b"], adstore.Expr) and str(rec["b"]) == "a * 3"
    assert isinstance(rec["l"], adstore.Expr)
    assert adstore.eval("b", rec) == 6
    assert adstore.eval("l", rec) == [1, 2]
    again = adstore.Record.parse(rec.unparse())
    assert again == rec


# ---- property tests -----------------------------------------------------

names = st.text(alphabet=st.characters(min_codepoint=65, max_codepoint=122,
                                       whitelist_categories=("Lu", "Ll")), min_size=1, max_size=8)
# Doubles hold microseconds exactly within 2**33 seconds of 1970 (1697 to 2242):
# past that an AbsTime is as exact as its double (docs/python.md).
times = st.datetimes(min_value=dt.datetime(1698, 1, 1), max_value=dt.datetime(2241, 12, 31),
                     timezones=st.sampled_from([UTC, dt.timezone(dt.timedelta(hours=5, minutes=30)),
                                                dt.timezone(dt.timedelta(minutes=-11 * 60 - 1))]))
deltas = st.timedeltas(min_value=dt.timedelta(days=-99000), max_value=dt.timedelta(days=99000))
scalars = (st.none() | st.just(adstore.ERROR) | st.booleans() |
           st.integers(min_value=-2**63, max_value=2**63 - 1) |
           st.floats(allow_nan=False) | st.text(alphabet=st.characters(blacklist_characters='\0'), max_size=20) | times | deltas |
           st.binary(max_size=20) |
           st.tuples(st.integers(0, 2**64 - 1), st.integers(1, 2**64 - 1)).map(
               lambda hl: adstore.Id("#%d" % hl[1]) if hl[0] == 0 else adstore.uuid()))


def records(children):
    return st.lists(st.tuples(names, children), max_size=5).map(
        lambda kv: adstore.Record(dict((k.lower(), v) for k, v in kv)))


values = st.recursive(scalars, lambda ch: st.lists(ch, max_size=4) | records(ch), max_leaves=20)


@settings(max_examples=400, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_random_values_round_trip(v):
    back, text = roundtrip(v)
    assert same(back, v), (back, v)
    assert same(text, v), (text, v)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-6.2e10, max_value=2.5e11))
def test_abstime_seconds_with_microseconds_round_trip(secs):
    # ClassAd -> Python -> ClassAd: the same double for microsecond times.
    secs = round(secs, 6)
    v = adstore.eval("absTime(%r)" % secs)
    rec = adstore.Record({"t": v})
    assert adstore.eval("t == absTime(%r)" % secs, rec) is True


def test_seeded_records_through_a_store(store):
    rnd = random.Random(15)
    recs = []
    for i in range(300):
        r = {"AdType": "Machine", "Name": "n%d" % i, "I": rnd.randrange(-2**63, 2**63),
             "F": rnd.uniform(-1e300, 1e300), "S": "".join(chr(rnd.randrange(32, 0x2000)) for _ in range(5)),
             "L": [rnd.random(), "x", [True, None]], "T": dt.datetime.fromtimestamp(rnd.randrange(0, 2**32), UTC),
             "D": dt.timedelta(microseconds=rnd.randrange(-10**15, 10**15)), "B": rnd.randbytes(8),
             "R": {"Inner": i}}
        recs.append(r)
    assert store.store(recs) == 300
    for r in recs:
        got = store.get("Machine", r["Name"])
        for k, v in r.items():
            assert same(got[k], adstore.Record(v) if isinstance(v, dict) else v), k


# ---- bad input ------------------------------------------------------------

@pytest.mark.parametrize("v,exc,text", [
    (2**63, adstore.RangeError, "does not fit"),
    (-2**63 - 1, adstore.RangeError, "does not fit"),
    (dt.datetime(2024, 1, 1), ValueError, "without a timezone"),
    (dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(microseconds=5))), ValueError, "whole seconds"),
    (dt.timedelta(days=999999999), adstore.RangeError, "beyond"),
    (object(), TypeError, "has no ClassAd value"),
    ({1: 2}, TypeError, "must be a str"),
    ({"": 2}, adstore.InvalidError, "empty"),
    ([adstore.Expr("a")], TypeError, "inside a list"),
    (dt.date(2024, 1, 1), TypeError, "has no ClassAd value"),
    ({1, 2}, TypeError, "has no ClassAd value"),
])
def test_values_without_a_classad_form_raise(v, exc, text):
    with pytest.raises(exc, match=text):
        adstore.eval("v", {"v": v})


def test_nesting_too_deep_is_a_limit_error():
    v = []
    for _ in range(1000):
        v = [v]
    with pytest.raises((adstore.LimitError, RecursionError)):
        adstore.eval("v", {"v": v})


def test_self_containing_list_raises_not_crashes():
    v = []
    v.append(v)
    with pytest.raises((adstore.LimitError, RecursionError)):
        adstore.eval("v", {"v": v})


def test_abstime_outside_datetime_years_is_a_range_error():
    with pytest.raises(adstore.RangeError, match="years 1 to 9999"):
        adstore.eval("absTime(1e12)")


def test_error_sentinel_is_one_object():
    assert adstore.eval("error") is adstore.ERROR
    assert repr(adstore.ERROR) == "adstore.ERROR"
    with pytest.raises(TypeError):
        type(adstore.ERROR)()
    import pickle
    assert pickle.loads(pickle.dumps(adstore.ERROR)) is adstore.ERROR


def test_id_parse_format_order_and_errors():
    a, b = adstore.Id("#5"), adstore.Id("6")
    assert str(a) == "#5" and a.kind == "increment" and int(a) == 5 and a < b
    assert adstore.Id(str(adstore.uuid())).kind == "random"
    assert {a: 1}[adstore.Id("#5")] == 1
    with pytest.raises(adstore.Error):
        adstore.Id("#not-an-id")
    with pytest.raises(TypeError):
        adstore.Id(5)


def test_blob_equality_and_meta():
    b = adstore.Blob(b"abc", {"K": 1})
    assert b == adstore.Blob(b"abc", adstore.Record(k=1))
    assert b != adstore.Blob(b"abd", {"K": 1})
    assert b.data == b"abc" and b.meta["k"] == 1
    with pytest.raises(TypeError):
        adstore.Blob(5)


def test_zone_offset_in_seconds_survives_records():
    # ClassAd text writes zones to the minute; the record path keeps seconds.
    t = dt.datetime(2000, 1, 1, tzinfo=dt.timezone(dt.timedelta(seconds=-39601)))
    back = adstore.eval("t", {"t": t})
    assert back == t and back.utcoffset() == t.utcoffset()
