#!/usr/bin/env bash
# Posted events/s of the release feedback-host with no journal, the SQLite journal (per-commit) and the PostgreSQL
# journal (--journal-url, a private PostgreSQL 15 on this machine with its default durability: fsync on,
# synchronous_commit on), interleaved. Each round starts a fresh server (pinned to SERVER_CPU) with a fresh data
# directory or database, creates SESSIONS counter sessions, and runs `wrk -t1 -cCONNECTIONS -dDURATION` (pinned to
# LOAD_CPU) posting increments round-robin. PostgreSQL runs pinned to PG_CPU (SERVER_CPU by default: the server side
# gets one core either way, as SQLite's writes run inside the server's process).
# The servers run with the shipped defaults (info, the access log on); SERVER_LOG_ARGS adds flags.
# Usage: scripts/postgres-bench.sh   (ROUNDS=3 DURATION=10s CONNECTIONS=64 SESSIONS=64 SERVER_CPU=0 LOAD_CPU=1)
# Another build side by side: a mode MODE@LABEL runs MODE with the binary that BINARIES="LABEL=PATH ..." names, e.g.
#   BINARIES="before=/tmp/before/feedback-host" MODES="none postgres postgres@before" scripts/postgres-bench.sh
# Run as root (PostgreSQL then runs as the user feedbackhost-bench, made when missing) or as a user who may run it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/post-rounds.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PG_CPU=${PG_CPU:-$SERVER_CPU}
PORT=${PORT:-18091}
PG_PORT=${PG_PORT:-18092}
MODES=${MODES:-"none sqlite postgres"}

scripts/release-binary.sh
BINARY=../.build/release/feedback-host
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
WORK=$(mktemp -d)
chmod 755 "$WORK"
PID=""
PG_PID=""
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    [ -n "$PG_PID" ] && kill -QUIT "$PG_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

as_pg=()
PG_USER=$(id -un)
if [ "$(id -u)" = 0 ]; then
    PG_USER=feedbackhost-bench
    id -u "$PG_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER"
    as_pg=(setpriv "--reuid=$PG_USER" "--regid=$PG_USER" --init-groups --)
fi
mkdir "$WORK/pg"
chown "$PG_USER" "$WORK/pg"
"${as_pg[@]}" "$PG_BIN/initdb" -D "$WORK/pg/data" -A trust -U "$PG_USER" -E UTF8 --locale=C >/dev/null
taskset -c "$PG_CPU" "${as_pg[@]}" "$PG_BIN/postgres" -D "$WORK/pg/data" -p "$PG_PORT" -k "$WORK/pg" \
    -c listen_addresses=127.0.0.1 -c max_connections=50 >"$WORK/pg/log" 2>&1 &
PG_PID=$!
for _ in $(seq 100); do
    "$PG_BIN/pg_isready" -h 127.0.0.1 -p "$PG_PORT" -q && break
    sleep 0.1
done

RESULTS=$WORK/results
for round in $(seq "$ROUNDS"); do
    for mode in $MODES; do
        journal=(--data-dir none)
        binary=$BINARY
        for entry in ${BINARIES:-}; do [ "${mode#*@}" = "${entry%%=*}" ] && binary=${entry#*=}; done
        case ${mode%@*} in
        sqlite) journal=(--data-dir "$WORK/data-$round-${mode//@/-}" --fsync per-commit) ;;
        postgres)
            database=bench_${round}_$(tr -c 'a-z0-9\n' _ <<<"$mode")
            "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d postgres -qc "CREATE DATABASE $database"
            journal=(--journal-url "postgres://$PG_USER@127.0.0.1:$PG_PORT/$database")
            ;;
        esac
        measure_posts "$mode" "$round" "$binary" "${journal[@]}"
    done
done
print_medians
