#!/usr/bin/env bash
# Throughput of seedkv-server vs redis-server on this machine, measured with
# redis-benchmark at pipeline depths 1 and 16. A figure is printed only for
# runs that reported no errors and left the keyspace as expected (DBSIZE),
# because a benchmark that does not count errors measures the speed of
# failure.
#
# Usage: server/benches/compare.sh [requests] [clients]
# Env:   SEEDKV_BIN (a prebuilt seedkv-server), TESTS (default set,get,incr,mset), PIPELINES (default "1 16").
set -euo pipefail

cd "$(dirname "$0")/../.."
REQUESTS=${1:-200000}
CLIENTS=${2:-50}
TESTS=${TESTS:-set,get,incr,mset}
PIPELINES=${PIPELINES:-"1 16"}

for tool in redis-server redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install redis-server redis-tools)" >&2; exit 1; }
done

# SEEDKV_BIN names a prebuilt binary; otherwise build the release one.
if [ -n "${SEEDKV_BIN:-}" ]; then
    SEEDKV=$SEEDKV_BIN
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    cargo build --release -q -p seedkv-server
    SEEDKV="$CARGO_TARGET_DIR/release/seedkv-server"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "server on $1 did not start" >&2; exit 1; }

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

SEEDKV_PORT=$(free_port)
"$SEEDKV" --port "$SEEDKV_PORT" --seed 1 2>/dev/null & PIDS+=($!)
REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null & PIDS+=($!)
wait_port "$SEEDKV_PORT"
wait_port "$REDIS_PORT"

declare -A RPS
ERRORS=0
for p in $PIPELINES; do
    for server in seedkv redis; do
        port=$SEEDKV_PORT; [ "$server" = redis ] && port=$REDIS_PORT
        redis-cli -p "$port" flushall >/dev/null
        out=$(redis-benchmark -p "$port" -t "$TESTS" -n "$REQUESTS" -c "$CLIENTS" -P "$p" -q 2>&1 | tr '\r' '\n')
        errs=$(grep -ciE 'error|ERR ' <<<"$out" || true)
        # Without -r the benchmark's keys are literal: key:__rand_int__ (SET,
        # GET, MSET) and counter:__rand_int__ (INCR).
        want=0
        [[ ",$TESTS," =~ ,(set|mset|get), ]] && want=$((want + 1))
        [[ ",$TESTS," =~ ,incr, ]] && want=$((want + 1))
        dbsize=$(redis-cli -p "$port" dbsize)
        if [ "$errs" != 0 ] || [ "$dbsize" != "$want" ]; then
            echo "$server -P $p: $errs error lines, DBSIZE $dbsize (want $want):" >&2
            grep -iE 'error|ERR ' <<<"$out" | head -5 >&2 || true
            ERRORS=$((ERRORS + 1))
            continue
        fi
        while read -r name rps; do
            RPS["$server|$p|$name"]=$rps
        done < <(grep 'requests per second' <<<"$out" | sed -E 's/^ *([A-Z]+).*: ([0-9.]+) requests per second.*/\1 \2/')
    done
done

printf '\n%-8s %-4s %14s %14s %8s\n' test P seedkv redis ratio
for p in $PIPELINES; do
    for name in $(tr ',' '\n' <<<"$TESTS" | tr '[:lower:]' '[:upper:]'); do
        s=${RPS["seedkv|$p|$name"]:-}
        r=${RPS["redis|$p|$name"]:-}
        ratio=$( [ -n "$s" ] && [ -n "$r" ] && awk -v s="$s" -v r="$r" 'BEGIN{printf "%.2f", s/r}' || echo -)
        printf '%-8s %-4s %14s %14s %8s\n' "$name" "$p" "${s:--}" "${r:--}" "$ratio"
    done
done
echo "(requests/s; $REQUESTS requests, $CLIENTS clients; ratio = seedkv/redis; runs with errors or a wrong DBSIZE are left out)"
exit "$ERRORS"
