"""Memory.local: the bundled server's life, and the `higmem` command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

import higmem
from conftest import REPO


def test_local_starts_and_stops_its_server(tmp_path):
    mem = higmem.Memory.local(tmp_path / "m.db", user_id="alice", embedder="hashing")
    proc = mem._process.proc
    assert mem.base_url.startswith("http://127.0.0.1:") and mem.api_key.startswith("hgm_")
    mem.add("Persisted across servers.")
    mem.close()
    assert proc.returncode == 0, mem.server_log  # SIGTERM: a graceful stop
    assert "higmem: stopped" in mem.server_log
    # The data is in the file: a second server on it sees the turn.
    with higmem.Memory.local(tmp_path / "m.db", user_id="alice", embedder="hashing") as again:
        assert again.stats().turns == 1
        assert again.search("persisted").evidence[0].turn.text == "Persisted across servers."


def test_local_without_a_path_is_temporary():
    with higmem.Memory.local(user_id="alice", embedder="hashing") as mem:
        work = mem._process.workdir
        mem.add("Gone at the end.")
        assert os.path.isfile(os.path.join(work, "higmem.db"))
    assert not os.path.exists(work)


def test_local_fails_with_the_server_output(tmp_path):
    with pytest.raises(higmem.ServerStartError, match="unknown flag"):
        higmem.Memory.local(tmp_path / "m.db", args=["--no-such-flag"])


def test_fresh_key_is_required(tmp_path):
    with higmem.Memory.local(tmp_path / "m.db", user_id="alice", embedder="hashing") as mem:
        with pytest.raises(higmem.AuthenticationError):
            higmem.Client(mem.base_url, None, user_id="alice").stats()


def test_higmem_on_path_prints_the_revision():
    exe = shutil.which("higmem", path=os.path.dirname(sys.executable))
    assert exe, "the wheel installs no higmem command next to this Python"
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.startswith("higmem ") and "(revision " in out
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git checkout to compare the revision with")
    if (REPO / ".git").is_file():
        pytest.skip("a linked git worktree: the go command records no revision there (it looks for a .git directory)")
    assert "(revision " + head in out, f"{out!r}: the wheel's binary was not built from HEAD {head}"
    # The same binary that Memory.local runs.
    direct = subprocess.run([str(higmem.binary_path()), "--version"], capture_output=True, text=True, check=True).stdout
    assert direct == out


def test_wheel_carries_the_licences():
    pkg = higmem.binary_path().parent.parent
    notices = (pkg / "THIRD_PARTY_LICENSES.txt").read_text()
    for mod in ("modernc.org/sqlite@", "github.com/prometheus/client_golang@", "github.com/spf13/cobra@"):
        assert f"==== {mod}" in notices, mod
    assert "==== github.com/prometheus/client_golang@v1.25.0: NOTICE ====" in notices
