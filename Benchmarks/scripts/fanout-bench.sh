#!/usr/bin/env bash
# SSE fan-out (issue 6): one counter session streamed to N subscribers by the release feedback-host and by the
# Hummingbird peer, measured by SSEFanout (post-to-receive latency, events lost and conflated, RSS per idle
# stream). Each round restarts both servers (so each RSS figure starts from a fresh process) and alternates which
# goes first, then runs LoopbackFloor: the same frames sent to as many loopback connections by a C loop that does
# nothing else, the floor any server meets on this machine. Servers (and the floor's senders) on SERVER_CPU, the
# client (and the floor's receiver) on LOAD_CPU; SERVER_CPU=0,1 LOAD_CPU=0,1 lets everything use both cores.
# Usage: scripts/fanout-bench.sh   (SUBSCRIBERS="1000 10000" ROUNDS=3 EVENTS=100 INTERVAL_MS=20 SERVER_CPU=0 LOAD_CPU=1)
set -euo pipefail
source "$(dirname "$0")/servers.sh"
SUBSCRIBERS=${SUBSCRIBERS:-1000 10000}
ROUNDS=${ROUNDS:-3}
EVENTS=${EVENTS:-100}
INTERVAL_MS=${INTERVAL_MS:-20}
# Each server and the client hold one descriptor per subscriber (the hard limit on the build machine is 20000).
ulimit -n "$(ulimit -Hn)"

build_servers SSEFanout LoopbackFloor
RESULTS=$(mktemp)
# Flags that lift feedback-host's connection and stream limits (defaults 10,000) above the largest N.
FH_FLAGS=(--max-connections 20000 --stream-max-per-session 20000 --stream-max-total 20000)

run() { # server port pid n
    local out
    out=$(taskset -c "$LOAD_CPU" "$BENCH_BIN/SSEFanout" --port "$2" --pid "$3" --subscribers "$4" \
        --events "$EVENTS" --interval-ms "$INTERVAL_MS" --label "$1") || { echo "$out"; echo "$1 failed" >&2; exit 1; }
    echo "$out" | sed '/^RESULT/d'
    echo "  (load $(cut -d' ' -f1-3 /proc/loadavg))"
    grep '^RESULT' <<<"$out" >>"$RESULTS"
}

uptime
for n in $SUBSCRIBERS; do
    for round in $(seq "$ROUNDS"); do
        echo "== $n subscribers, round $round"
        start_servers "${FH_FLAGS[@]}"
        if [ $((round % 2)) -eq 1 ]; then
            run FeedbackHost "$FH_PORT" "$FH_PID" "$n"
            run "$PEER" "$HB_PORT" "$HB_PID" "$n"
        else
            run "$PEER" "$HB_PORT" "$HB_PID" "$n"
            run FeedbackHost "$FH_PORT" "$FH_PID" "$n"
        fi
        check_servers
        stop_servers
        floor_events=$(( EVENTS < 20 ? EVENTS : 20 ))
        out=$("$BENCH_BIN/LoopbackFloor" --subscribers "$n" --events "$floor_events" --interval-ms "$(( INTERVAL_MS > 200 ? INTERVAL_MS : 200 ))" \
            --sender-cpus "$SERVER_CPU" --receiver-cpus "$LOAD_CPU")
        echo "$out" | sed '/^RESULT/d'
        grep '^RESULT' <<<"$out" >>"$RESULTS"
    done
done
uptime

echo
echo "medians of $ROUNDS rounds ($EVENTS events every $INTERVAL_MS ms; servers on CPU $SERVER_CPU, client on CPU $LOAD_CPU)"
echo "(received: the states that arrived; reflected: every posted state, until it or a later one arrived, so that"
echo " skipping states cannot flatter it; the floor sends each event's frames back to back, at least 200 ms apart)"
field() { # label n key
    grep "label=$1 subscribers=$2 " "$RESULTS" | tr ' ' '\n' | sed -n "s/^$3=//p" | median
}
for n in $SUBSCRIBERS; do
    for server in FeedbackHost "$PEER"; do
        printf '%-12s %6d subscribers: received p50 %7.2f ms  p99 %7.2f ms  max %8.2f ms | reflected p50 %7.2f ms  p99 %7.2f ms  max %8.2f ms | lost %s  conflated %s  %6.0f bytes/idle stream  server CPU %5.2f us/frame\n' \
            "$server" "$n" "$(field "$server" "$n" p50_ms)" "$(field "$server" "$n" p99_ms)" "$(field "$server" "$n" max_ms)" \
            "$(field "$server" "$n" reflect_p50_ms)" "$(field "$server" "$n" reflect_p99_ms)" "$(field "$server" "$n" reflect_max_ms)" \
            "$(field "$server" "$n" lost)" "$(field "$server" "$n" conflated)" "$(field "$server" "$n" bytes_per_stream)" \
            "$(field "$server" "$n" server_cpu_us)"
        # What comes before a fan-out's first frame is the post's way through the server (with the journal, its
        # commit's fsync): the floor, which starts its clock at its first send, has none of it.
        printf '%-12s %6d subscribers: per event, post answered after %.2f ms, its first frame received after %.2f ms, its last after %.2f ms\n' \
            "$server" "$n" "$(field "$server" "$n" answer_ms)" "$(field "$server" "$n" first_ms)" "$(field "$server" "$n" last_ms)"
    done
    printf '%-12s %6d subscribers: p50 %7.2f ms  p99 %7.2f ms  max %8.2f ms | per event, its last frame after %.2f ms\n' floor \
        "$n" "$(field floor "$n" p50_ms)" "$(field floor "$n" p99_ms)" "$(field floor "$n" max_ms)" "$(field floor "$n" last_ms)"
    # Each round's FeedbackHost p99 over the same round's floor p99 (a drifting machine disturbs these less than the
    # ratio of the medians above).
    ratios=$(paste -d' ' \
        <(grep "label=FeedbackHost subscribers=$n " "$RESULTS" | sed 's/.* p99_ms=\([0-9.]*\).*/\1/') \
        <(grep "label=floor subscribers=$n " "$RESULTS" | sed 's/.* p99_ms=\([0-9.]*\).*/\1/') |
        awk '{printf "%.3f\n", $1 / $2}')
    echo "  FeedbackHost p99 / floor p99 round by round: $(echo $ratios) -> median $(median <<<"$ratios") (target 1.1)"
    # The p99 of 20 events is most of the slowest event's frames: one slow event (the machine's, in either) sets it.
    # The typical event's last frame (the median over the events of each one's last) shows the fan-out itself; ours
    # counts from the post (its way and the commit included), the floor's from its first send.
    typical=$(paste -d' ' \
        <(grep "label=FeedbackHost subscribers=$n " "$RESULTS" | sed 's/.* last_ms=\([0-9.]*\).*/\1/') \
        <(grep "label=floor subscribers=$n " "$RESULTS" | sed 's/.* last_ms=\([0-9.]*\).*/\1/') |
        awk '{printf "%.3f\n", $1 / $2}')
    echo "  FeedbackHost's typical event / the floor's (last frame), round by round: $(echo $typical) -> median $(median <<<"$typical")"
done
total_lost() { grep "label=$1 " "$RESULTS" | sed 's/.*lost=\([0-9]*\).*/\1/' | awk '{s += $1} END {print s + 0}'; }
echo "lost over all runs: FeedbackHost $(total_lost FeedbackHost), $PEER $(total_lost "$PEER")"
rm -f "$RESULTS"
