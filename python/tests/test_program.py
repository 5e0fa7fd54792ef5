"""A store opened by Python and by the adstore program at the same time."""

import json
import subprocess

import adstore
from conftest import machine


def run(program, db, *args, stdin=None):
    p = subprocess.run([program, "-d", db, *args], input=stdin, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_python_and_the_program_share_a_store(store, program):
    db = store.path
    store.store(machine(i) for i in range(10))
    # the program reads what Python committed, while Python holds the store open
    out = run(program, db, "execute", "-format", "json", "SELECT Name FROM Machine ORDER BY Name")
    assert [r["Name"] for r in json.loads(out)] == sorted("m%d" % i for i in range(10))
    # the program writes; Python sees it at once
    run(program, db, "execute", 'STORE [ AdType = "Machine"; Name = "cli"; Memory = 5 ]')
    assert store.get("Machine", "cli")["Memory"] == 5
    # a Python read transaction keeps its snapshot while the program writes
    with store.transaction(readonly=True) as ro:
        run(program, db, "execute", 'UPDATE Machine SET Memory = 6 WHERE Name == "cli"')
        assert ro.get("Machine", "cli")["Memory"] == 5
    assert store.get("Machine", "cli")["Memory"] == 6
    # a streaming SELECT in Python while the program imports
    cur = store.execute("SELECT Name FROM Machine")
    first = next(cur)
    run(program, db, "import", "-", stdin='AdType = "Machine"\nName = "imp"\n\n')
    assert first["Name"] and len(list(cur)) == 10
    assert store.get("Machine", "imp") is not None
    run(program, db, "verify")  # exit status 0: the store is sound
    assert store.verify()["problems"] == 0


def test_program_waits_for_a_python_write_transaction(store, program):
    db = store.path
    tx = store.transaction()
    tx.store(machine(1))
    p = subprocess.Popen([program, "-d", db, "execute", 'STORE [ AdType = "Machine"; Name = "w" ]'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        p.wait(timeout=0.5)
        finished_early = True
    except subprocess.TimeoutExpired:
        finished_early = False
    tx.commit()
    out, err = p.communicate(timeout=120)
    assert not finished_early and p.returncode == 0, err
    assert store.get("Machine", "w") is not None and store.get("Machine", "m1") is not None
