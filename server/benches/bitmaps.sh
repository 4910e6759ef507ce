#!/usr/bin/env bash
# BITCOUNT over a 64 MB bitmap: seedkv-server vs Debian's redis-server on
# this machine.
#
# Both servers get the same 64 MB of seeded pseudo-random bytes (redis-cli
# -x SET); a figure is printed only when STRLEN and the BITCOUNT answers
# (whole string, and a BIT range) agree between the servers and with the
# count computed here. Then redis-benchmark runs each command with one
# client (the latency of one scan), ROUNDS times per server, alternating
# which goes first; the table shows each server's median round. With two or
# more CPUs the servers run pinned to CPU 1 and redis-benchmark to CPU 0.
# The load average is printed with the table: figures from a busy machine
# are noise.
#
# Usage: server/benches/bitmaps.sh [requests]
# Env:   SEEDKV_BIN (a prebuilt seedkv-server), ROUNDS (default 3),
#        SIZE_MB (default 64).
set -euo pipefail

cd "$(dirname "$0")/../.."
REQUESTS=${1:-50}
ROUNDS=${ROUNDS:-3}
SIZE_MB=${SIZE_MB:-64}
SERVER_CPU=(); BENCH_CPU=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    SERVER_CPU=(taskset -c 1); BENCH_CPU=(taskset -c 0)
fi

for tool in redis-server redis-benchmark redis-cli python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install redis-server redis-tools)" >&2; exit 1; }
done

if [ -n "${SEEDKV_BIN:-}" ]; then
    SEEDKV=$SEEDKV_BIN
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    cargo build --release -q -p seedkv-server
    SEEDKV="$CARGO_TARGET_DIR/release/seedkv-server"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "server on $1 did not start" >&2; exit 1; }

BITMAP=$(mktemp)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "$BITMAP"; }
trap cleanup EXIT

SEEDKV_PORT=$(free_port)
"${SERVER_CPU[@]}" "$SEEDKV" --port "$SEEDKV_PORT" --seed 1 2>/dev/null & PIDS+=($!)
REDIS_PORT=$(free_port)
"${SERVER_CPU[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null & PIDS+=($!)
wait_port "$SEEDKV_PORT"
wait_port "$REDIS_PORT"

# The bitmap, and the answers every server must give.
read -r BYTES WHOLE RANGED < <(python3 - "$BITMAP" "$SIZE_MB" <<'EOF'
import random, sys
path, size = sys.argv[1], int(sys.argv[2]) << 20
data = random.Random(1).randbytes(size)
open(path, "wb").write(data)
whole = int.from_bytes(data, "big").bit_count()
# BITCOUNT bm 3 -5 BIT: bits 3 .. 8*size-5.
ranged = (int.from_bytes(data, "big") >> 4 & ((1 << (8 * size - 7)) - 1)).bit_count()
print(size, whole, ranged)
EOF
)

FAILED=0
for port in "$SEEDKV_PORT" "$REDIS_PORT"; do
    redis-cli -p "$port" -x SET bm <"$BITMAP" >/dev/null
    got="$(redis-cli -p "$port" STRLEN bm) $(redis-cli -p "$port" BITCOUNT bm) $(redis-cli -p "$port" BITCOUNT bm 3 -5 BIT)"
    if [ "$got" != "$BYTES $WHOLE $RANGED" ]; then
        echo "port $port answered '$got', expected '$BYTES $WHOLE $RANGED'" >&2
        FAILED=1
    fi
done
[ "$FAILED" = 0 ] || exit 1

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
# run PORT ARGS...: "requests/s p50_ms" of one redis-benchmark run.
run() {
    local port=$1; shift
    "${BENCH_CPU[@]}" redis-benchmark -p "$port" -c 1 -n "$REQUESTS" --csv "$@" 2>/dev/null |
        python3 -c 'import csv, sys
rows = list(csv.reader(sys.stdin))
print(rows[1][1], rows[1][4])'
}
median() { sort -n | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }

printf '%-28s %-8s %12s %10s\n' "command (${SIZE_MB} MB)" server "requests/s" "p50 ms"
for cmd in "BITCOUNT bm" "BITCOUNT bm 3 -5 BIT"; do
    declare -A RPS=() P50=()
    for round in $(seq 1 "$ROUNDS"); do
        order=("$SEEDKV_PORT" "$REDIS_PORT")
        [ $((round % 2)) = 0 ] && order=("$REDIS_PORT" "$SEEDKV_PORT")
        for port in "${order[@]}"; do
            # shellcheck disable=SC2086
            read -r rps p50 < <(run "$port" $cmd)
            RPS[$port]+="$rps"$'\n'; P50[$port]+="$p50"$'\n'
        done
    done
    for port in "$SEEDKV_PORT" "$REDIS_PORT"; do
        name=seedkv; [ "$port" = "$REDIS_PORT" ] && name=redis
        printf '%-28s %-8s %12s %10s\n' "$cmd" "$name" \
            "$(printf '%s' "${RPS[$port]}" | median)" "$(printf '%s' "${P50[$port]}" | median)"
    done
    unset RPS P50
done
echo "load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg)"
