# Sourced by post-anatomy.sh, post-syscalls.sh and post-arc.sh: one server under the load they all measure, a fresh
# process in an empty directory on SERVER_CPU, SESSIONS counter sessions (the floor takes any path segment as a
# session) and `wrk -t1 -cCONNECTIONS` posting {"type":"increment"} round-robin to them on LOAD_CPU. The environment
# may set SERVER_CPU, LOAD_CPU, CONNECTIONS and SESSIONS (0, 1, 64 and 64 otherwise); the caller sets PORT and SCRIPTS,
# and traps EXIT with `stop_post_server`, which stops the server (PID) and removes its directory (DIR).
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
CONNECTIONS=${CONNECTIONS:-64}
SESSIONS=${SESSIONS:-64}
PID=
DIR=
# The feedback-host binary being measured, by its absolute path (empty for the floor).
SERVER_BINARY=

stop_post_server() {
    [ -z "$PID" ] || { kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }
    [ -z "$DIR" ] || { rm -rf "$DIR"; DIR=; }
}

# Starts `floor` (JournalFloor, built when missing) or a feedback-host binary, either with its flags (the floor's
# `--journal off`: no database, each post answered as it is read), waits until it answers, and writes its sessions'
# ids to $DIR/ids. NAME goes in front of its messages.
start_post_server() { # name floor|binary [flags...]
    local name=$1 i
    shift
    DIR=$(mktemp -d)
    if [ "$1" = floor ]; then
        local floor
        floor=$(cd "$SCRIPTS/.." && swift build -c release --show-bin-path)/JournalFloor
        [ -x "$floor" ] || (cd "$SCRIPTS/.." && swift build -c release --product JournalFloor >/dev/null)
        SERVER_BINARY=
        shift
        taskset -c "$SERVER_CPU" "$floor" "$@" --port "$PORT" --db "$DIR/floor.sqlite" 2>/dev/null &
        PID=$!
        for i in $(seq "$SESSIONS"); do echo "s$i" >>"$DIR/ids"; done
    else
        # The binary by its absolute path: the server runs in its own empty directory (its ./data).
        SERVER_BINARY=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
        shift
        (cd "$DIR" && exec taskset -c "$SERVER_CPU" "$SERVER_BINARY" "$@" --port "$PORT" >"$DIR/stdout" 2>"$DIR/stderr") &
        PID=$!
    fi
    local up=0
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && up=1 && break; sleep 0.1; done
    if [ "$up" = 0 ]; then
        echo "$name: nothing answers on port $PORT; the server's last words:" >&2
        tail -5 "$DIR/stderr" >&2 2>/dev/null || true
        exit 1
    fi
    [ -n "$SERVER_BINARY" ] || return 0
    for _ in $(seq "$SESSIONS"); do
        # The answer ends without a newline, which sed keeps: echo adds it.
        echo "$(curl -sf -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
            "http://127.0.0.1:$PORT/v1/sessions" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')" >>"$DIR/ids"
    done
}

# Starts the load for SECONDS, its report in $DIR/wrk.out; sets LOAD to its process.
start_post_load() { # seconds
    # shellcheck disable=SC2046
    taskset -c "$LOAD_CPU" wrk -t1 "-c$CONNECTIONS" "-d$1s" -s "$SCRIPTS/post-session-event.lua" \
        "http://127.0.0.1:$PORT" -- $(cat "$DIR/ids") >"$DIR/wrk.out" &
    LOAD=$!
}

# Calls FUNCTION once for each server of the arguments, with its words: `floor`, or a feedback-host binary and its
# flags, the servers apart by `--` (`floor -- BINARY -- BINARY --data-dir none`).
for_each_server() { # function arguments...
    local function=$1 argument
    local group=()
    shift
    for argument in "$@" --; do
        if [ "$argument" != -- ]; then
            group+=("$argument")
            continue
        fi
        [ ${#group[@]} -gt 0 ] || continue
        "$function" "${group[@]}"
        group=()
    done
}

# A server's name in a report: the binary's file name, then its flags.
server_name() { # floor|binary [flags...]
    if [ $# -eq 1 ]; then basename "$1"; else echo "$(basename "$1") ${*:2}"; fi
}
