"""Fixtures shared by the adstore Python tests."""

import os

import pytest

import adstore

MACHINE_TYPE = '[AdType = "Type"; ForType = "Machine"; KeyAttributes = { "Name" }]'


@pytest.fixture
def store(tmp_path):
    """A new store with type Machine keyed by Name."""
    s = adstore.open(str(tmp_path / "db"))
    list(s.execute("STORE " + MACHINE_TYPE))
    yield s
    if not s.closed:
        s.close()


@pytest.fixture
def program():
    """The adstore program built beside the module."""
    path = os.environ.get("ADSTORE_PROGRAM")
    if not path or not os.path.exists(path):
        pytest.skip("ADSTORE_PROGRAM is not set (run through ctest)")
    return path


def machine(i, **kw):
    rec = {"AdType": "Machine", "Name": "m%d" % i, "Memory": 1024 * (i % 8 + 1), "Cpus": i % 4 + 1}
    rec.update(kw)
    return rec
