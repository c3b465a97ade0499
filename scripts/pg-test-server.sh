#!/usr/bin/env bash
# A throwaway PostgreSQL server for higmem's tests, on loopback only.
#
#   scripts/pg-test-server.sh start [DIR]   init a cluster in DIR (default: a new
#                                           temp dir), start it, print the DSN
#   scripts/pg-test-server.sh stop DIR      stop the server and remove DIR
#
# The server listens on 127.0.0.1 at a free port, with its unix socket in DIR,
# trusts local connections (it is for tests), and holds one role and database,
# both named higmem_test. Use the printed DSN as HIGMEM_TEST_POSTGRES:
#
#   dir=$(mktemp -d)
#   export HIGMEM_TEST_POSTGRES=$(scripts/pg-test-server.sh start "$dir")
#   go test ./store/postgres/
#   scripts/pg-test-server.sh stop "$dir"
#
# PostgreSQL refuses to run as root; run as root, the script runs the server as
# the postgres user (Debian's package creates it). Durability is off (fsync,
# synchronous_commit) unless HIGMEM_PG_DURABLE=1: data of a test server need not
# survive a crash, and the tests run faster without it.
set -euo pipefail

die() { echo "pg-test-server: $*" >&2; exit 1; }

bindir() {
  if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -n "$d" ] && [ -x "$d/initdb" ]; then echo "$d"; return; fi
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  die "PostgreSQL not found (apt-get install postgresql, or set PG_BIN to its bin directory)"
}

# as runs a command as the server's owner.
as() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# freeport prints a TCP port on 127.0.0.1 that nothing listens on.
freeport() {
  local p
  for _ in $(seq 1 100); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  die "no free port found"
}

start() {
  local dir=${1:-}
  if [ -z "$dir" ]; then dir=$(mktemp -d "${TMPDIR:-/tmp}/higmem-pg.XXXXXX"); fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty"
  local bin; bin=$(bindir)
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
  chmod 700 "$dir"
  as "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  local durable="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if [ "${HIGMEM_PG_DURABLE:-}" = 1 ]; then durable=""; fi
  local port ok=""
  for _ in 1 2 3 4 5; do
    port=$(freeport)
    if as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200 $durable" start >/dev/null 2>&1; then
      ok=1; break
    fi
  done
  [ -n "$ok" ] || { tail -n 20 "$dir/server.log" >&2 || true; die "server did not start"; }
  echo "$port" >"$dir/port"
  local psql=("$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -q)
  as "${psql[@]}" -c "CREATE ROLE higmem_test LOGIN CREATEDB" \
    -c "CREATE DATABASE higmem_test OWNER higmem_test" >/dev/null
  echo "postgres://higmem_test@127.0.0.1:$port/higmem_test?sslmode=disable"
  echo "pg-test-server: running in $dir; stop with: $0 stop $dir" >&2
}

stop() {
  local dir=${1:-}
  [ -n "$dir" ] || die "usage: $0 stop DIR"
  [ -d "$dir" ] || return 0
  dir=$(cd "$dir" && pwd)
  if [ -f "$dir/data/postmaster.pid" ]; then
    as "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  *) echo "usage: $0 start [DIR] | stop DIR" >&2; exit 2 ;;
esac
