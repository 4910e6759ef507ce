#!/usr/bin/env bash
# Throughput of seedkv-server vs redis-server on this machine, measured with
# redis-benchmark at pipeline depths 1 and 16. A figure is printed only for
# runs that reported no errors and left the keyspace as expected (DBSIZE),
# because a benchmark that does not count errors measures the speed of
# failure.
#
# Usage: server/benches/compare.sh [requests] [clients]
# Env:   SEEDKV_BIN (a prebuilt seedkv-server), TESTS (default set,get,incr,mset),
#        PIPELINES (default "1 16"), ROUNDS (default 3).
#
# Each round runs every (pipeline, server) pair in turn, alternating the
# servers, and the table shows the median round, so that noise from other
# processes hits both servers alike. With two or more CPUs the servers run
# pinned to CPU 1 and redis-benchmark to CPU 0.
set -euo pipefail

cd "$(dirname "$0")/../.."
REQUESTS=${1:-200000}
CLIENTS=${2:-50}
TESTS=${TESTS:-set,get,incr,mset}
PIPELINES=${PIPELINES:-"1 16"}
ROUNDS=${ROUNDS:-3}
SERVER_CPU=(); BENCH_CPU=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    SERVER_CPU=(taskset -c 1); BENCH_CPU=(taskset -c 0)
fi

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
"${SERVER_CPU[@]}" "$SEEDKV" --port "$SEEDKV_PORT" --seed 1 2>/dev/null & PIDS+=($!)
REDIS_PORT=$(free_port)
"${SERVER_CPU[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null & PIDS+=($!)
wait_port "$SEEDKV_PORT"
wait_port "$REDIS_PORT"

declare -A RPS
ERRORS=0
for round in $(seq 1 "$ROUNDS"); do
for p in $PIPELINES; do
    order="seedkv redis"; [ $((round % 2)) = 0 ] && order="redis seedkv"
    for server in $order; do
        port=$SEEDKV_PORT; [ "$server" = redis ] && port=$REDIS_PORT
        redis-cli -p "$port" flushall >/dev/null
        out=$("${BENCH_CPU[@]}" redis-benchmark -p "$port" -t "$TESTS" -n "$REQUESTS" -c "$CLIENTS" -P "$p" -q 2>&1 | tr '\r' '\n')
        errs=$(grep -ciE 'error|ERR ' <<<"$out" || true)
        # Without -r the benchmark's keys are literal: key:__rand_int__ (SET,
        # GET, MSET) and counter:__rand_int__ (INCR).
        want=0
        [[ ",$TESTS," =~ ,(set|mset|get), ]] && want=$((want + 1))
        [[ ",$TESTS," =~ ,incr, ]] && want=$((want + 1))
        dbsize=$(redis-cli -p "$port" dbsize)
        if [ "$errs" != 0 ] || [ "$dbsize" != "$want" ]; then
            echo "$server -P $p round $round: $errs error lines, DBSIZE $dbsize (want $want):" >&2
            grep -iE 'error|ERR ' <<<"$out" | head -5 >&2 || true
            ERRORS=$((ERRORS + 1))
            continue
        fi
        while read -r name rps; do
            RPS["$server|$p|$name"]+="$rps "
        done < <(grep 'requests per second' <<<"$out" | sed -E 's/^ *([A-Z]+).*: ([0-9.]+) requests per second.*/\1 \2/')
    done
done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR) print a[int((NR+1)/2)]}'; }

printf '\n%-8s %-4s %14s %14s %8s\n' test P seedkv redis ratio
for p in $PIPELINES; do
    for name in $(tr ',' '\n' <<<"$TESTS" | tr '[:lower:]' '[:upper:]'); do
        s=$(median <<<"${RPS["seedkv|$p|$name"]:-}")
        r=$(median <<<"${RPS["redis|$p|$name"]:-}")
        ratio=$( [ -n "$s" ] && [ -n "$r" ] && awk -v s="$s" -v r="$r" 'BEGIN{printf "%.2f", s/r}' || echo -)
        printf '%-8s %-4s %14s %14s %8s\n' "$name" "$p" "${s:--}" "${r:--}" "$ratio"
    done
done
echo "(requests/s, median of $ROUNDS rounds; $REQUESTS requests, $CLIENTS clients; ratio = seedkv/redis; runs with errors or a wrong DBSIZE are left out)"
exit "$ERRORS"
