"""Measure the Python package: cold start of Memory.local and the client's
cost per call against the Go client on the same server.

    python python/tools/bench.py --go-client /tmp/clientbench [--runs 5]

Run it with the wheel installed (bash python/test.sh's venv, or any venv
with the wheel). Cold start: from Memory.local() on a new database file to
the first ask's answer (one turn added before it), per embedder. Per call:
the Go client (python/tools/clientbench, built with go build) and this
package's Client make the same calls on one server, alternated, each run
a process or loop of --calls calls on a warm connection.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import higmem


def cold_start(embedder: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            with higmem.Memory.local(Path(d) / "m.db", user_id="alice", embedder=embedder) as mem:
                mem.add("I adopted a greyhound called Biscuit.")
                mem.ask("What is my dog called?")
                out.append(time.perf_counter() - t0)
    return out


def py_calls(mem: higmem.Memory, op: str, n: int) -> float:
    call = (lambda: mem.stats()) if op == "stats" else (lambda: mem.search("Where do I walk the dog?"))
    for _ in range(20):
        call()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t0) / n * 1e6


def fmt(xs: list[float], unit: str, scale: float = 1) -> str:
    xs = [x * scale for x in xs]
    return f"min {min(xs):.1f} / median {statistics.median(xs):.1f} / max {max(xs):.1f} {unit}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--go-client", required=True, help="the built python/tools/clientbench")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    for emb in ("auto", "hashing"):
        print(f"cold start, embedder {emb}: {fmt(cold_start(emb, args.runs), 'ms', 1000)}", flush=True)
    with tempfile.TemporaryDirectory() as d:
        with higmem.Memory.local(Path(d) / "m.db", user_id="alice", embedder="hashing") as mem:
            mem.add(["I adopted a greyhound called Biscuit.", "We walk on Carcavelos beach every morning."] * 20)
            for op in ("stats", "search"):
                go, py = [], []
                for _ in range(args.runs):
                    r = subprocess.run([args.go_client, "-url", mem.base_url, "-key", mem.api_key, "-op", op,
                                        "-n", str(args.calls)], check=True, capture_output=True, text=True)
                    go.append(float(r.stdout))
                    py.append(py_calls(mem, op, args.calls))
                diff = [p - g for p, g in zip(py, go)]
                print(f"{op}: Go client {fmt(go, 'µs')}; Python client {fmt(py, 'µs')}; "
                      f"Python − Go per run {fmt(diff, 'µs')}", flush=True)


if __name__ == "__main__":
    main()
