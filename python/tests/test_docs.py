"""Every Python example of README.md and docs/*.md that uses this package,
run as a reader would: a script of its own, in an empty directory, with the
installed wheel (TestDocsExamples in internal/cli leaves them to this test)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO

BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)

# What some examples must print.
WANT = {
    ("README.md", 0): ["I adopted a greyhound called Biscuit."],
}


def examples():
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        n = 0
        for m in BLOCK.finditer(doc.read_text()):
            code = m.group(1)
            if re.search(r"^(import higmem|from higmem)", code, re.M):
                rel = str(doc.relative_to(REPO))
                yield pytest.param(rel, n, code, id=f"{rel}#{n}")
                n += 1


ALL = list(examples())


def test_there_are_examples():
    docs = {p.values[0] for p in ALL}
    assert {"README.md", "docs/PYTHON.md"} <= docs, docs


@pytest.mark.parametrize("doc,n,code", ALL)
def test_example(tmp_path, doc, n, code):
    script = tmp_path / "example.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{doc} example {n} failed:\n{r.stdout}\n{r.stderr}"
    for want in WANT.get((doc, n), []):
        assert want in r.stdout, f"{doc} example {n}: output lacks {want!r}:\n{r.stdout}"
