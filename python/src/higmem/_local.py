"""The bundled higmem binary, and Memory: a client that may own its server."""

from __future__ import annotations

import base64
import collections
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Mapping, Optional, Sequence, Union

from ._client import DEFAULT_TIMEOUT, AsyncClient, Client
from ._errors import ServerStartError

_EXE = "higmem.exe" if os.name == "nt" else "higmem"


def binary_path() -> Path:
    """The higmem binary this wheel carries (higmem/bin/higmem).

    Raises FileNotFoundError in a source checkout without a built binary.
    """
    p = Path(__file__).resolve().parent / "bin" / _EXE
    if not p.is_file():
        raise FileNotFoundError(f"{p}: this installation of higmem carries no binary; install a platform wheel "
                                "(python/build.py builds them) or pass binary=... to Memory.local")
    return p


_LISTEN = re.compile(r"serving on (http://\S+)")


def _new_key() -> tuple[str, dict]:
    """A fresh API key and its keys-file entry, as `higmem serve keygen` makes them."""
    secret = "hgm_" + base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    return secret, {"name": "python", "sha256": hashlib.sha256(secret.encode()).hexdigest(), "users": ["*"]}


class _Process:
    """A running `higmem serve`; stops it once (close, exit, garbage)."""

    def __init__(self, argv: list[str], env: dict[str, str], startup_timeout: float, workdir: Optional[str]) -> None:
        self.workdir = workdir
        self.tail: collections.deque[str] = collections.deque(maxlen=50)
        kw: dict = {}
        if sys.platform.startswith("linux"):
            kw["preexec_fn"] = _die_with_parent
        if os.name == "nt":
            kw["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env, **kw)
        self._stop = weakref.finalize(self, _stop, self.proc, workdir)
        self.url = self._await_listen(startup_timeout)
        threading.Thread(target=self._drain, daemon=True).start()

    def _await_listen(self, timeout: float) -> str:
        found: list[str] = []
        done = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for raw in self.proc.stderr:
                line = raw.decode(errors="replace").rstrip()
                self.tail.append(line)
                m = _LISTEN.search(line)
                if m:
                    found.append(m.group(1))
                    break
            done.set()

        t = threading.Thread(target=read, daemon=True)
        t.start()
        if not done.wait(timeout) or not found:
            self.close()
            t.join(1)
            why = f"did not start within {timeout} s" if not done.is_set() else f"exited with status {self.proc.returncode}"
            raise ServerStartError(f"higmem serve {why}:\n" + "\n".join(self.tail))
        return found[0]

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.tail.append(raw.decode(errors="replace").rstrip())

    def close(self) -> int:
        self._stop()
        return self.proc.returncode if self.proc.returncode is not None else -1


def _stop(proc: subprocess.Popen, workdir: Optional[str], grace: float = 60.0) -> None:
    """Stop the server as SIGTERM does (writes in flight finish), then kill."""
    if proc.poll() is None:
        try:
            if os.name == "nt":
                proc.send_signal(signal.CTRL_BREAK_EVENT)  # type: ignore[attr-defined]
            else:
                proc.terminate()
            proc.wait(grace)
        except (subprocess.TimeoutExpired, OSError):
            proc.kill()
            proc.wait()
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the server gets SIGTERM if this Python process dies first."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class Memory(Client):
    """A higmem memory reached through the REST API: a Client that may own
    the server it talks to.

    ``Memory.local(path)`` starts the bundled server on the database file
    ``path``, on a free loopback port with a fresh API key, and stops it on
    close() (or at the end of a ``with`` block, or when Python exits)::

        with higmem.Memory.local("memory.db", user_id="alice") as mem:
            mem.add("I adopted a greyhound called Biscuit.")
            print(mem.search("What is my dog called?").evidence[0].turn.text)

    ``Memory(url, api_key)`` talks to a server started elsewhere.
    """

    def __init__(self, base_url: str, api_key: Optional[str] = None, *, user_id: Optional[str] = None,
                 agent_id: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(base_url, api_key, user_id=user_id, agent_id=agent_id, timeout=timeout)
        self._api_key = api_key
        self._process: Optional[_Process] = None

    @classmethod
    def local(cls, path: Union[str, os.PathLike, None] = None, *, user_id: Optional[str] = None,
              agent_id: Optional[str] = None, mode: Optional[str] = None, embedder: Optional[str] = None,
              args: Sequence[str] = (), env: Optional[Mapping[str, str]] = None,
              binary: Union[str, os.PathLike, None] = None, startup_timeout: float = 120.0,
              timeout: float = DEFAULT_TIMEOUT) -> "Memory":
        """Start the bundled `higmem serve` on a database and connect to it.

        ``path`` is the SQLite file (created if missing) or a postgres://
        URL; None keeps the memory in a temporary file removed on close.
        ``mode`` ("offline", "default", "paper"; default: offline unless an
        LLM endpoint is configured) and ``embedder`` ("auto", "e5",
        "minilm", "hashing", "none") are the CLI's --mode and --embedder;
        ``args`` are more flags for `higmem serve`. The server reads the
        HIGMEM_* variables of ``env`` (default: this process's environment),
        so an LLM endpoint configured there is used.
        """
        exe = Path(binary) if binary is not None else binary_path()
        workdir = tempfile.mkdtemp(prefix="higmem-")
        try:
            db = str(path) if path is not None else os.path.join(workdir, "higmem.db")
            secret, entry = _new_key()
            keys = os.path.join(workdir, "keys.json")
            with open(keys, "w") as f:
                json.dump({"keys": [entry]}, f)
            argv = [str(exe), "--db", db]
            if mode:
                argv += ["--mode", mode]
            if embedder:
                argv += ["--embedder", embedder]
            argv += ["serve", "--addr", "127.0.0.1:0", "--keys-file", keys, *args]
            e = dict(os.environ if env is None else env)
            proc = _Process(argv, e, startup_timeout, workdir)
        except BaseException:
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        mem = cls(proc.url, secret, user_id=user_id, agent_id=agent_id, timeout=timeout)
        mem._process = proc
        return mem

    @property
    def api_key(self) -> Optional[str]:
        """The API key the client sends (for a local server, its fresh one)."""
        return self._api_key

    @property
    def server_log(self) -> str:
        """The last lines the local server wrote to stderr ("" for a remote one)."""
        return "\n".join(self._process.tail) if self._process else ""

    def async_client(self) -> AsyncClient:
        """An AsyncClient on the same server, key and default space."""
        return AsyncClient(self.base_url, self._api_key, user_id=self.user_id, agent_id=self.agent_id)

    def close(self) -> None:
        """Close the connections and stop the local server, if any: it
        finishes the writes in flight first."""
        super().close()
        if self._process is not None:
            self._process.close()

    def __enter__(self) -> "Memory":
        return self


def main() -> None:
    """The `higmem` command: runs the bundled binary with the same arguments."""
    exe = str(binary_path())
    if os.name == "nt":
        sys.exit(subprocess.call([exe, *sys.argv[1:]]))
    os.execv(exe, [exe, *sys.argv[1:]])
