"""P12 (python/bench/p12.py) at a smoke size: it runs, and adstore's and
sqlite3's SELECTs agree (the script fails if they do not). No timing is
checked here: the figures belong to the benchmark run itself."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "p12.py"


def test_p12_smoke(tmp_path):
    p = subprocess.run([sys.executable, str(SCRIPT), "--n", "2000", "--dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=600, env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("P12, 2000 records")
    assert [l.split("|")[1].strip() for l in lines[2:]] == ["store", "select"]
    assert list(tmp_path.iterdir()) == []  # the stores were removed
