#!/usr/bin/env bash
# Issue 17: posted events/s of the release feedback-host AS SHIPPED (`make run`: journal in ./data, fsync per-commit,
# info logging with the access log on, stderr to a file) against its own GET /healthz and against the Hummingbird
# peer, in one run. Every round starts each feedback-host variant afresh in an empty directory (so ./data is new),
# creates SESSIONS counter sessions, then measures, interleaved and alternating the order: the variant's
# GET /healthz, its POST /v1/sessions/{id}/events (round-robin over the sessions), and the same two on the peer.
# Every measurement is `wrk -t1 -cCONNECTIONS -dDURATION` pinned to LOAD_CPU; the servers are pinned to SERVER_CPU.
# VARIANTS names feedback-host runs: `defaults` (no flag), `no-journal` (--data-dir none), `no-access-log`
# (--log-access off), `interval` (--fsync interval:10), `natural` (--journal-commit-delay-us 0: each group commit
# starts as soon as the previous one is done, no gathering window), `quiet` (--data-dir none --log-level warning); `NAME@LABEL=PATH`
# runs the binary at PATH with NAME's flags (to compare builds in one run, e.g. `defaults@before=/tmp/fh-before`).
# Every round also measures `JournalFloor` (Benchmarks/Sources/JournalFloor): a C server that only journals each post
# in SQLite the way feedback-host's journal does (WAL, synchronous=FULL, one group commit at a time) and answers it
# after the commit: the floor of a durable post on this machine, whatever the server around it does (FLOOR=0 skips it).
# Each measurement also reports the server's CPU a request (its user and kernel time over the wrk run, all threads, from
# /proc/PID/stat, over the requests answered), and the summary the floor's CPU a post over each variant's, round by
# round: the rate ratio a core of their own would give, which a shared machine's drift disturbs less (session 40).
# Usage: scripts/defaults-bench.sh   (ROUNDS=3 DURATION=10s CONNECTIONS=64 SESSIONS=64 VARIANTS=defaults
#                                      FH_BINARY=../.build/release/feedback-host SERVER_CPU=0 LOAD_CPU=1)
set -euo pipefail
source "$(dirname "$0")/servers.sh"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-64}
VARIANTS=${VARIANTS:-defaults}
FH_PORT=${FH_PORT:-18090}
FH_BINARY=${FH_BINARY:-}

FLOOR=${FLOOR:-1}
FLOOR_PORT=${FLOOR_PORT:-$((FH_PORT + 2))}
if [ -z "$FH_BINARY" ]; then
    build_servers JournalFloor
    FH_BINARY=$ROOT_DIR/.build/release/feedback-host
else  # a given binary: the peer and the floor are built only when missing
    BENCH_BIN=$(cd "$BENCH_DIR" && swift build -c release --show-bin-path)
    [ -x "$BENCH_BIN/HummingbirdPeer" ] || (cd "$BENCH_DIR" && swift build -c release --product HummingbirdPeer)
    [ -x "$BENCH_BIN/JournalFloor" ] || (cd "$BENCH_DIR" && swift build -c release --product JournalFloor)
fi
WORK=$(mktemp -d)
RUN_DIRS+=("$WORK")
RESULTS=$WORK/results

flags() {
    case "${1%%@*}" in
    defaults) ;;
    no-journal) echo "--data-dir none" ;;
    no-access-log) echo "--log-access off" ;;
    interval) echo "--fsync interval:10" ;;
    natural) echo "--journal-commit-delay-us 0" ;;
    quiet) echo "--data-dir none --log-level warning" ;;
    *) echo "unknown variant $1" >&2; exit 1 ;;
    esac
}

wait_for() { # port
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/healthz" >/dev/null && return 0; sleep 0.1; done
    echo "nothing answers on port $1" >&2
    exit 1
}

create_sessions() { # port file
    : >"$2"
    for _ in $(seq "$SESSIONS"); do
        echo "$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
            "http://127.0.0.1:$1/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')" >>"$2"
    done
    [ "$(grep -c . "$2")" -eq "$SESSIONS" ] || { echo "creating sessions on port $1 failed" >&2; exit 1; }
}

# The server's user and kernel CPU so far, in clock ticks (all its threads: /proc/PID/stat's utime and stime).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK_US=$((1000000 / $(getconf CLK_TCK)))

measure() { # label kind port pid [ids file]
    local out rps p99 bad before requests cpu
    before=$(cpu_ticks "$4")
    if [ "$2" = events ]; then
        # shellcheck disable=SC2046
        out=$(taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$DURATION" --latency \
            -s "$BENCH_DIR/scripts/post-session-event.lua" "http://127.0.0.1:$3" -- $(cat "$5"))
    else
        out=$(taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$DURATION" --latency "http://127.0.0.1:$3/healthz")
    fi
    # CPU a request: what a machine whose speed drifts disturbs less than the rate (its share of the core aside).
    requests=$(awk '/requests in/ {print $1}' <<<"$out")
    cpu=$(awk -v t="$(($(cpu_ticks "$4") - before))" -v n="$requests" -v us="$TICK_US" 'BEGIN {printf "%.2f", t * us / n}')
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
    bad=$(awk '/Non-2xx/ {print $5}' <<<"$out")
    printf '%-26s %-7s %9.0f req/s  p99 %-9s %5.2f us CPU a request %s (load %s)\n' "$1" "$2" "$rps" "$p99" "$cpu" \
        "${bad:+NON-2XX $bad}" "$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "$1 $2 $rps ${bad:-0} ${round:-0} $cpu" >>"$RESULTS"
}

taskset -c "$SERVER_CPU" "$BENCH_BIN/HummingbirdPeer" "$HB_PORT" >"$WORK/peer.log" 2>&1 &
HB_PID=$!
SERVER_PIDS+=("$HB_PID")
wait_for "$HB_PORT"
create_sessions "$HB_PORT" "$WORK/hb-ids"

uptime
for round in $(seq "$ROUNDS"); do
    echo "round $round"
    runs=("peer")
    [ "$FLOOR" = 0 ] || runs+=("floor")
    for variant in $VARIANTS; do
        if [ $((round % 2)) -eq 1 ]; then runs=("fh:$variant" "${runs[@]}"); else runs+=("fh:$variant"); fi
    done
    for run in "${runs[@]}"; do
        if [ "$run" = peer ]; then
            measure Hummingbird events "$HB_PORT" "$HB_PID" "$WORK/hb-ids"
            measure Hummingbird healthz "$HB_PORT" "$HB_PID"
            continue
        fi
        if [ "$run" = floor ]; then
            # A new database each round, as feedback-host gets a new ./data; any path segment is a session id to it.
            dir=$WORK/$round-floor
            mkdir -p "$dir"
            taskset -c "$SERVER_CPU" "$BENCH_BIN/JournalFloor" --port "$FLOOR_PORT" --db "$dir/floor.sqlite" \
                >"$dir/stdout" 2>"$dir/stderr" &
            pid=$!
            wait_for "$FLOOR_PORT"
            measure JournalFloor events "$FLOOR_PORT" "$pid" "$WORK/hb-ids"
            measure JournalFloor healthz "$FLOOR_PORT" "$pid"
            kill "$pid"
            wait "$pid" || true
            rm -f "$dir"/floor.sqlite*
            rm -rf "$dir"
            continue
        fi
        variant=${run#fh:}
        binary=$FH_BINARY
        if [[ "$variant" == *@*=* ]]; then
            binary=${variant#*=}
            variant=${variant%%=*}
        fi
        dir=$WORK/$round-${variant//[@\/]/-}
        mkdir -p "$dir"
        # shellcheck disable=SC2046
        (cd "$dir" && exec taskset -c "$SERVER_CPU" "$binary" --port "$FH_PORT" $(flags "$variant") \
            >"$dir/stdout" 2>"$dir/stderr") &
        pid=$!
        wait_for "$FH_PORT"
        create_sessions "$FH_PORT" "$dir/ids"
        if [ $((round % 2)) -eq 1 ]; then
            measure "FeedbackHost:$variant" healthz "$FH_PORT" "$pid"
            measure "FeedbackHost:$variant" events "$FH_PORT" "$pid" "$dir/ids"
        else
            measure "FeedbackHost:$variant" events "$FH_PORT" "$pid" "$dir/ids"
            measure "FeedbackHost:$variant" healthz "$FH_PORT" "$pid"
        fi
        kill "$pid"
        wait "$pid" || true
        lines=$(grep -c 'http.access' "$dir/stderr" || true)
        echo "  (access lines written by $variant, all flushed at its graceful stop: $lines)"
        # Its journal and its access log (about 150 MiB a run) are counted: nothing a later round reads.
        rm -rf "$dir/data" "$dir/stderr"
    done
done
uptime
check_servers

echo
echo "medians of $ROUNDS rounds (wrk -t1 -c$CONNECTIONS -d$DURATION; servers on CPU $SERVER_CPU, wrk on CPU $LOAD_CPU)"
col() { # label kind [column: 3 the rate, 6 the CPU a request]: its median over the rounds
    awk -v n="$1" -v k="$2" -v c="${3:-3}" '$1 == n && $2 == k {print $c}' "$RESULTS" | median
}
hb=$(col Hummingbird events)
printf '%-26s healthz %8.0f  events %8.0f\n' Hummingbird "$(col Hummingbird healthz)" "$hb"
for variant in $VARIANTS; do
    variant=${variant%%=*}
    awk -v v="$variant" -v h="$(col "FeedbackHost:$variant" healthz)" -v e="$(col "FeedbackHost:$variant" events)" \
        -v hb="$hb" 'BEGIN {
        printf "%-26s healthz %8.0f  events %8.0f  events/healthz %.2f (target 0.8)  events/Hummingbird %.2f (target 2)\n",
            "FeedbackHost:" v, h, e, e / h, e / hb
    }'
done
if [ "$FLOOR" != 0 ]; then
    floor=$(col JournalFloor events)
    awk -v h="$(col JournalFloor healthz)" -v e="$floor" -v hb="$hb" 'BEGIN {
        printf "%-26s healthz %8.0f  events %8.0f  events/healthz %.2f  events/Hummingbird %.2f\n",
            "JournalFloor", h, e, e / h, e / hb
    }'
    for variant in $VARIANTS; do
        variant=${variant%%=*}
        awk -v v="$variant" -v h="$(col "FeedbackHost:$variant" healthz)" -v e="$(col "FeedbackHost:$variant" events)" \
            -v f="$floor" 'BEGIN {
            printf "  floor events / FeedbackHost:%s healthz %.2f (the most a durable post could reach against the 0.8 target); its events / floor events %.2f\n",
                v, f / h, e / f
        }'
    done
fi
# The same ratios round by round: each round's servers run within a minute or two of each other, so a machine whose
# speed drifts between rounds (these are shared) moves both sides of a round's ratio alike.
ratios() { # numerator-label denominator-label [column]: that round's events of the one over the other's (the rate, or
    # with column 6 the CPU a request), each round, sorted
    awk -v a="$1" -v b="$2" -v c="${3:-3}" '$2 == "events" && $1 == a {x[$5] = $c} $2 == "events" && $1 == b {y[$5] = $c}
        END {for (r in x) if (r in y && y[r] > 0) printf "%.3f\n", x[r] / y[r]}' "$RESULTS" | sort -n | tr '\n' ' '
}
echo "round by round (median of the rounds' own ratios, which a drifting machine disturbs less):"
for variant in $VARIANTS; do
    variant=${variant%%=*}
    each=$(ratios "FeedbackHost:$variant" Hummingbird)
    printf '  FeedbackHost:%s events / Hummingbird events: %s-> median %s (target 2)\n' "$variant" "$each" \
        "$(tr ' ' '\n' <<<"$each" | grep . | median)"
    if [ "$FLOOR" != 0 ]; then
        each=$(ratios "FeedbackHost:$variant" JournalFloor)
        printf '  FeedbackHost:%s events / floor events: %s-> median %s (target 0.8 with the journal, 0.95 without)\n' \
            "$variant" "$each" "$(tr ' ' '\n' <<<"$each" | grep . | median)"
    fi
done
if [ "$FLOOR" != 0 ]; then
    # The floor's CPU a post over the variant's, round by round: the rate the variant would reach against the floor's
    # if both had the core to themselves (what the share of the core and the machine's drift leave out; session 40).
    echo "CPU a posted event (the server's user and kernel time over the run, over its answers), medians:"
    printf '  JournalFloor %.2f us' "$(col JournalFloor events 6)"
    for variant in $VARIANTS; do
        variant=${variant%%=*}
        printf ', FeedbackHost:%s %.2f us' "$variant" "$(col "FeedbackHost:$variant" events 6)"
    done
    echo
    for variant in $VARIANTS; do
        variant=${variant%%=*}
        each=$(ratios JournalFloor "FeedbackHost:$variant" 6)
        printf '  floor CPU / FeedbackHost:%s CPU a posted event: %s-> median %s\n' "$variant" "$each" \
            "$(tr ' ' '\n' <<<"$each" | grep . | median)"
    done
fi
failures=$(awk '{s += $4} END {print s + 0}' "$RESULTS")
echo "non-2xx answers over all runs: $failures"
[ "$failures" -eq 0 ]
