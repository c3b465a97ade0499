"""Fixtures: a local higmem server from the installed wheel's binary.

The tests run against the installed package (`pip install` of the wheel
that python/build.py built), not the source tree: .ci/run installs the
wheel into a fresh venv and runs pytest there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import higmem

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def shared(tmp_path_factory):
    """One server for the tests that only read and write their own space
    (the hashing embedder: instant, no model files)."""
    db = tmp_path_factory.mktemp("shared") / "memory.db"
    with higmem.Memory.local(db, embedder="hashing", mode="offline") as mem:
        yield mem


@pytest.fixture
def user(request) -> str:
    """A user id of the test's own, so tests on the shared server do not meet."""
    return "u-" + request.node.name.replace("[", "-").replace("]", "").replace("_", "-")[:60]
