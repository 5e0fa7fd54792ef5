"""Python code that fights the extension: mappings whose items() lie or change
what is being converted, str subclasses with their own __eq__, and the errors
of failed writes. Each case crashed the interpreter or read freed memory
before stop 36 (a hostile-caller run against the bindings)."""

from collections.abc import Mapping

import pytest

import adstore
from conftest import machine


class ClearsOnItems(Mapping):
    """A mapping whose items() empties the list it sits in."""

    def __init__(self, victim):
        self.victim = victim

    def __getitem__(self, k):
        return 1

    def __iter__(self):
        return iter(["a"])

    def __len__(self):
        return 1

    def items(self):
        self.victim.clear()
        return [("a", 1)]


def test_params_mapping_items_must_be_pairs(store):
    class NotPairs:
        def keys(self):
            return ["a"]

        def items(self):
            return [12345]

    with pytest.raises(TypeError, match=r"items\(\) must give \(name, value\) pairs"):
        store.execute("SELECT * FROM Machine WHERE x == :a", NotPairs())


def test_a_params_list_changed_while_it_is_converted(store):
    params = []
    params.extend([ClearsOnItems(params)] + ["v%d" % i for i in range(200)])
    # converted from a copy: every value is still bound (the mapping is a
    # record value, which a parameter cannot be compared with: no match)
    rows = list(store.execute("SELECT Name FROM Machine WHERE x == ?" + " || x == ?" * 200,
                              params))
    assert rows == []


def test_a_list_value_changed_while_it_is_converted():
    values = []
    values.extend([ClearsOnItems(values)] + ["s%d" % i * 20 for i in range(1000)])
    got = adstore.eval("size(x)", {"x": values})
    assert got == 1001


def test_a_str_subclass_key_with_its_own_eq(store):
    store.store([machine(i) for i in range(3)])
    rows = list(store.execute("SELECT * FROM Machine ORDER BY Name"))
    row = rows[0]

    class Key(str):
        def __hash__(self):
            return hash("Memory")

        def __eq__(self, other):
            row["Other"] = 1  # would give the row a dict of its own mid-lookup
            return str.__eq__(self, other)

    assert row[Key("Memory")] == 1024
    assert Key("Memory") in rows[1]
    assert rows[1].get(Key("Memory")) == 2048


@pytest.mark.parametrize("statement, error, message", [
    ('UPDATE Nope SET x = 1', adstore.NotFoundError, "no type named Nope"),
    ('DELETE FROM Nope', adstore.NotFoundError, "no type named Nope"),
    ('STORE [ AdType = "Machine"; Name = :x ]', adstore.InvalidError,
     "no value bound to parameter :x"),
])
def test_a_failed_write_raises_its_own_error(store, statement, error, message):
    for _ in range(3):  # the error read after the cursor was freed came out garbled
        with pytest.raises(error, match=message):
            store.execute(statement)


def test_store_takes_one_mapping_that_is_not_a_dict(store):
    class One(Mapping):
        def __init__(self, d):
            self.d = d

        def __getitem__(self, k):
            return self.d[k]

        def __iter__(self):
            return iter(self.d)

        def __len__(self):
            return len(self.d)

    assert store.store(One(machine(1))) == 1
    assert store.get("Machine", "m1")["Memory"] == 2048


def test_a_fluid_generator_past_64_bits_is_refused(store):
    for g in (2**64, 2**64 + 5, 2**70):
        with pytest.raises(OverflowError):
            store.new_fluids(g)
    with pytest.raises(OverflowError):
        store.new_fluids(-1)
    with pytest.raises(TypeError):
        store.new_fluids("5")
    with store.transaction() as tx:
        with pytest.raises(OverflowError):
            tx.new_fluids(2**64 + 5)
