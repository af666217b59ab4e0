#!/usr/bin/env bash
# Posted events/s with token checks (issue 21): the release feedback-host with `--auth jwt --auth-create open`
# (server-minted HS256 tokens; every POST carries its session's post token, checked from the verified-token cache)
# and with ES256 JWTs a backend signed (`--auth-keys es.pem`; one per session, made here with python3-cryptography),
# against the same binary with `--auth off`, in turn in every round, each on a fresh data directory with the shipped
# defaults otherwise (journal per-commit, access log on). 64 counter sessions, `wrk -t1 -c64`, server on SERVER_CPU,
# wrk on LOAD_CPU.
# Usage: scripts/auth-bench.sh   (ROUNDS=3 DURATION=8s SERVER_CPU=0 LOAD_CPU=1 MODES="off jwt es256")
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
PORT=${PORT:-18093}
scripts/release-binary.sh
BINARY=../.build/release/feedback-host
WORK=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
head -c 48 /dev/urandom | base64 >"$WORK/key"
MODES=${MODES:-off jwt es256}
# The backend's ES256 key pair: the public half for the server, the private half signs each session's post token.
python3 - "$WORK" <<'PY'
import sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
key = ec.generate_private_key(ec.SECP256R1())
open(sys.argv[1] + "/es.key", "wb").write(key.private_bytes(serialization.Encoding.PEM,
    serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
open(sys.argv[1] + "/es.pem", "wb").write(key.public_key().public_bytes(serialization.Encoding.PEM,
    serialization.PublicFormat.SubjectPublicKeyInfo))
PY
# ID=TOKEN lines in, ID=ES256-TOKEN lines out: {"sid": ID, "scope": "post", "exp": in an hour}, kid "es".
es256_tokens() {
    python3 -c '
import base64, json, sys, time
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), None)
b64 = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=").decode()
for line in sys.stdin.read().split():
    sid = line.split("=")[0]
    head = b64(json.dumps({"alg": "ES256", "typ": "JWT", "kid": "es"}).encode())
    body = b64(json.dumps({"sid": sid, "scope": "post", "exp": int(time.time()) + 3600}).encode())
    r, s = decode_dss_signature(key.sign((head + "." + body).encode(), ec.ECDSA(hashes.SHA256())))
    print(sid + "=" + head + "." + body + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big")))
' "$WORK/es.key"
}

for round in $(seq "$ROUNDS"); do
    for mode in $MODES; do
        flags=(--auth off)
        [ "$mode" = jwt ] && flags=(--auth jwt --auth-create open --auth-key-file "$WORK/key")
        [ "$mode" = es256 ] && flags=(--auth jwt --auth-create open --auth-key-file "$WORK/key"
            --auth-keys "$WORK/es.pem")
        taskset -c "$SERVER_CPU" "$BINARY" --port "$PORT" --data-dir "$WORK/data-$round-$mode" "${flags[@]}" \
            >"$WORK/server.log" 2>&1 &
        PID=$!
        for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
        sessions=()
        for _ in $(seq 64); do
            sessions+=("$(curl -s -X POST -H 'Content-Type: application/json' -d '{"system":"counter"}' \
                "http://127.0.0.1:$PORT/v1/sessions" | python3 -c '
import json, sys
body = json.load(sys.stdin)
print(body["id"] + "=" + body.get("tokens", {}).get("post", "none"))')")
        done
        if [ "$mode" = es256 ]; then mapfile -t sessions < <(printf '%s\n' "${sessions[@]}" | es256_tokens); fi
        cpu_before=$(awk '{print $14 + $15}' "/proc/$PID/stat")
        out=$(taskset -c "$LOAD_CPU" wrk -t1 -c64 "-d$DURATION" --latency -s scripts/post-session-event-token.lua \
            "http://127.0.0.1:$PORT" -- "${sessions[@]}")
        rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
        # The server's CPU time per posted event (user + system, clock ticks of 10 ms): less moved by other
        # processes on the machine than the rate, which a busy machine lowers for every mode alike.
        requests=$(awk '/requests in/ {print $1}' <<<"$out")
        cpu_us=$(awk -v a="$cpu_before" -v b="$(awk '{print $14 + $15}' "/proc/$PID/stat")" -v n="$requests" \
            'BEGIN {printf "%.1f", (b - a) * 10000 / n}')
        errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
        printf 'round %d auth %-5s %10.0f events/s  %6s CPU us/event  p99 %s %s (load %s)\n' "$round" "$mode" \
            "$rps" "$cpu_us" "$(awk '$1 == "99%" {print $2}' <<<"$out")" "$errors" "$(cut -d' ' -f1-3 /proc/loadavg)"
        echo "$mode $rps" >>"$WORK/results"
        echo "$mode $cpu_us" >>"$WORK/cpu"
        kill "$PID"
        wait "$PID" 2>/dev/null || true
        PID=""
    done
done
for mode in $MODES; do
    echo "$mode $(awk -v m="$mode" '$1 == m {print $2}' "$WORK/results" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done | tee "$WORK/medians"
awk 'NR == 1 {b = $2} NR > 1 {printf "%s / %s = %.2f\n", $1, "off", $2 / b}' "$WORK/medians"
echo "median server CPU per posted event (us):"
for mode in $MODES; do
    echo "$mode $(awk -v m="$mode" '$1 == m {print $2}' "$WORK/cpu" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done | tee "$WORK/cpu-medians"
awk 'NR == 1 {b = $2} NR > 1 {printf "events per CPU second, %s / off = %.2f\n", $1, b / $2}' "$WORK/cpu-medians"
