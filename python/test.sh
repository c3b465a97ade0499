#!/usr/bin/env bash
# The Python package's tests, as CI runs them (.ci/run): build the wheel for
# this machine (python/build.py: go build + pip wheel), install it into a
# fresh virtual environment with the test dependencies from PyPI, and run
# pytest there against the bundled binary.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

dist=$(mktemp -d "${TMPDIR:-/tmp}/higmem-wheel.XXXXXX")
venv=$(mktemp -d "${TMPDIR:-/tmp}/higmem-venv.XXXXXX")
trap 'rm -rf "$dist" "$venv"' EXIT

"$PYTHON" python/build.py --out "$dist"
wheel=$(ls "$dist"/higmem-*.whl)
echo "wheel: $(basename "$wheel") ($(stat -c %s "$wheel") bytes)"

"$PYTHON" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# The wheel with its test extra (pytest, langchain-core), all from PyPI.
"$venv/bin/python" -m pip install -q "$wheel[test]"
"$venv/bin/python" -m pip list 2>/dev/null | grep -iE '^(higmem|httpx|pytest|langchain-core) '

# From python/, so that conftest.py finds the repository (README, docs,
# tools/gen_models.py); the package itself comes from the venv.
cd python
"$venv/bin/python" -m pytest -p no:cacheprovider -q tests "$@"
