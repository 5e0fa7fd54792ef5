"""docs/python.md's worked example runs and prints what the page says."""

import contextlib
import io
import os
import re
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("ADSTORE_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def example():
    text = (SOURCE / "docs" / "python.md").read_text()
    section = text.split("## A worked example", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    output = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    return code, output


def test_worked_example_prints_what_the_page_says(tmp_path, monkeypatch):
    code, expected = example()
    assert "avg@(sum(Memory))" in code and "@intervals" in code
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/python.md", "exec"), {"__name__": "docs_example"})
    assert out.getvalue() == expected


def test_type_hints_name_every_public_name():
    import ast
    import adstore
    stub = ast.parse((SOURCE / "python" / "adstore" / "__init__.pyi").read_text())
    declared = {n.name for n in stub.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    declared |= {t.id for n in stub.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    assert set(adstore.__all__) <= declared, set(adstore.__all__) - declared
    for name in adstore.__all__:
        assert getattr(adstore, name).__doc__ or name == "ERROR", name
