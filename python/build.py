#!/usr/bin/env python3
"""Build higmem's platform wheels: cross-compile the Go binary, one wheel each.

    python python/build.py                      # this machine's platform
    python python/build.py --platform linux/arm64 --platform windows/amd64
    python python/build.py --all                # every platform of PLATFORMS

Each wheel is py3-none-PLATFORM: the binary is pure Go (CGO_ENABLED=0, the
SQLite driver is modernc.org/sqlite), so it needs no libc of a given version
and no Python ABI. A Linux binary is static and runs on glibc and musl
systems alike, so one Linux wheel carries both the manylinux and the
musllinux tags. The wheels go to python/dist (--out to change). The build
needs Go (the version go.mod names) and pip, which fetches hatchling, the
PEP 517 backend, from PyPI.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _linux(arch: str, glibc: str = "2_17") -> str:
    tags = [f"manylinux_{glibc}_{arch}"]
    if glibc == "2_17":
        tags.append(f"manylinux2014_{arch}")
    tags.append(f"musllinux_1_1_{arch}")
    return ".".join(tags)


# PLATFORMS maps GOOS/GOARCH to the wheel platform tag. macOS: Go 1.26's
# linker marks binaries as needing macOS 12. Linux: manylinux2014's kernel
# (3.10) is newer than Go's minimum (3.2), and the binary uses no glibc.
PLATFORMS: dict[str, str] = {
    "linux/amd64": _linux("x86_64"),
    "linux/arm64": _linux("aarch64"),
    "linux/386": _linux("i686"),
    "linux/arm": _linux("armv7l"),  # GOARM=7
    "linux/ppc64le": _linux("ppc64le"),
    "linux/s390x": _linux("s390x"),
    "linux/riscv64": _linux("riscv64", glibc="2_31"),
    "darwin/amd64": "macosx_12_0_x86_64",
    "darwin/arm64": "macosx_12_0_arm64",
    "windows/amd64": "win_amd64",
    "windows/arm64": "win_arm64",
    "windows/386": "win32",
}


def host() -> str:
    """This machine's GOOS/GOARCH, as Go names it."""
    out = subprocess.run(["go", "env", "GOOS", "GOARCH"], check=True, capture_output=True, text=True, cwd=REPO)
    goos, goarch = out.stdout.split()
    return f"{goos}/{goarch}"


def build_binary(target: str, out: Path) -> Path:
    """Cross-compile cmd/higmem for target (GOOS/GOARCH) into out."""
    goos, goarch = target.split("/")
    exe = out / target.replace("/", "-") / ("higmem.exe" if goos == "windows" else "higmem")
    exe.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CGO_ENABLED="0", GOOS=goos, GOARCH=goarch)
    if goarch == "arm":
        env["GOARM"] = "7"
    # -buildvcs=auto records the commit (higmem --version) even where
    # GOFLAGS turns it off; a linked git worktree records none.
    cmd = ["go", "build", "-trimpath", "-buildvcs=auto", "-ldflags=-s -w", "-o", str(exe), "./cmd/higmem"]
    print(f"build.py: {target}: {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, check=True, env=env, cwd=REPO)
    return exe


def third_party_licenses(target: str, out: Path) -> Path:
    """Write the licence and NOTICE files of every module linked into the
    binary for target (go list -deps), for the wheel to carry."""
    goos, goarch = target.split("/")
    env = dict(os.environ, CGO_ENABLED="0", GOOS=goos, GOARCH=goarch)
    fmt = "{{with .Module}}{{.Path}}@{{.Version}}\t{{.Dir}}{{end}}"
    lines = subprocess.run(["go", "list", "-deps", "-f", fmt, "./cmd/higmem"], check=True, capture_output=True,
                           text=True, env=env, cwd=REPO).stdout.split("\n")
    mods = sorted({tuple(line.split("\t", 1)) for line in lines if "\t" in line and not line.startswith("github.com/higmem/higmem@")})
    parts = [f"The higmem binary in this wheel ({target}) links these Go modules; their licence and notice files follow.\n"]
    for mod, d in mods:
        files = sorted(f for f in Path(d).iterdir() if f.is_file() and f.name.upper().startswith(("LICENSE", "LICENCE", "COPYING", "NOTICE")))
        if not files:
            raise SystemExit(f"build.py: {mod}: no licence file in {d}")
        for f in files:
            parts.append(f"\n==== {mod}: {f.name} ====\n\n{f.read_text(errors='replace')}")
    path = out / target.replace("/", "-") / "THIRD_PARTY_LICENSES.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts))
    return path


def build_wheel(binary: Path, tag: str, dist: Path, notices: Path) -> Path:
    """Build the wheel carrying binary, tagged tag, into dist (with pip, PEP 517)."""
    dist.mkdir(parents=True, exist_ok=True)
    before = set(dist.glob("*.whl"))
    env = dict(os.environ, HIGMEM_BINARY=str(binary), HIGMEM_WHEEL_PLATFORM=tag, HIGMEM_NOTICES=str(notices))
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(dist), str(HERE)]
    subprocess.run(cmd, check=True, env=env)
    new = [w for w in dist.glob(f"*-py3-none-{tag}.whl")]
    if not new:
        raise SystemExit(f"build.py: pip built no wheel tagged {tag} in {dist}")
    wheel = max(new, key=lambda w: w.stat().st_mtime)
    if wheel in before:
        print(f"build.py: replaced {wheel.name}", flush=True)
    return wheel


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", action="append", metavar="GOOS/GOARCH", help="a platform to build (repeatable)")
    ap.add_argument("--all", action="store_true", help="build every platform of PLATFORMS")
    ap.add_argument("--out", type=Path, default=HERE / "dist", help="where the wheels go (default python/dist)")
    args = ap.parse_args(argv)
    targets = list(PLATFORMS) if args.all else (args.platform or [host()])
    for t in targets:
        if t not in PLATFORMS:
            ap.error(f"{t}: not a platform with a wheel tag (known: {', '.join(PLATFORMS)})")
    work = HERE / "build" / "bin"
    shutil.copyfile(REPO / "LICENSE", HERE / "LICENSE")  # the wheel's licence file
    for t in targets:
        wheel = build_wheel(build_binary(t, work), PLATFORMS[t], args.out, third_party_licenses(t, work))
        print(f"build.py: {t}: {wheel} ({wheel.stat().st_size:,} bytes)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
