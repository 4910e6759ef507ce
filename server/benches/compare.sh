#!/usr/bin/env bash
# Throughput and memory of seedkv-server vs Debian's redis-server on this
# machine, in one run.
#
# Throughput: redis-benchmark, one run per (test, pipeline depth, server):
# SET, GET, INCR, LPUSH, LRANGE_100, MSET at -P 1 and -P 16 with 50 clients.
# A figure is printed only if the run reported no error and left the data
# it must have left (a benchmark that does not count errors measures the
# speed of failure):
#   SET    DBSIZE 1, key:__rand_int__ holds a 3-byte payload
#   GET    (key preloaded with 3 bytes) DBSIZE 1, the key unchanged
#   INCR   DBSIZE 1, counter:__rand_int__ >= requests (a pipelined client
#          may send up to P-1 extra)
#   LPUSH  DBSIZE 1, LLEN mylist >= requests
#   LRANGE_100  (redis-benchmark pushes its own list first) DBSIZE 1, LLEN
#   MSET   DBSIZE 1 (all ten keys of MSET are key:__rand_int__)
# Any error or wrong count fails the whole script (exit 1) after the table.
# Beside requests/s, each run's server CPU time (user + system, from
# /proc/PID/stat) per request is printed: what a command costs the server,
# independent of how the two processes were scheduled.
#
# Memory: 1M keys of 16 bytes (key:000000000000..) with 100-byte values,
# loaded with redis-cli --pipe (its error count must be 0), verified with
# DBSIZE and a read-back of sample keys; then INFO used_memory and the
# process's RSS (/proc/PID/status VmRSS) for each server.
#
# Usage: server/benches/compare.sh [requests] [clients]
# Env:   SEEDKV_BIN (a prebuilt seedkv-server), CEILING=1 (see below), TESTS (default
#        set,get,incr,lpush,lrange_100,mset), PIPELINES (default "1 16"),
#        ROUNDS (default 3), MEMORY_KEYS (default 1000000; 0 skips memory).
#
# Each round runs every (test, pipeline) pair on both servers, alternating
# which goes first, and the table shows the median round, so that noise from
# other processes hits both alike. With two or more CPUs the servers run
# pinned to CPU 1 and redis-benchmark to CPU 0. The load average before and
# after is printed with the table: figures from a busy machine are noise.
#
# CEILING=1 puts server/examples/canned_replies in seedkv's place: a responder
# that stores nothing and answers each request with a canned reply of the
# right shape, at a few syscalls per batch. Its column is what redis-benchmark
# itself can drive on these cores, i.e. the largest ratio to redis-server any
# server could show here. Its runs are not verified (it keeps no data) and
# the memory part is skipped.
set -euo pipefail

cd "$(dirname "$0")/../.."
REQUESTS=${1:-200000}
CLIENTS=${2:-50}
TESTS=${TESTS:-set,get,incr,lpush,lrange_100,mset}
PIPELINES=${PIPELINES:-"1 16"}
ROUNDS=${ROUNDS:-3}
MEMORY_KEYS=${MEMORY_KEYS:-1000000}
CEILING=${CEILING:-0}
LABEL=seedkv
SERVER_CPU=(); BENCH_CPU=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    SERVER_CPU=(taskset -c 1); BENCH_CPU=(taskset -c 0)
fi

for tool in redis-server redis-benchmark redis-cli python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install redis-server redis-tools)" >&2; exit 1; }
done

# SEEDKV_BIN names a prebuilt binary; otherwise build the release one.
if [ "$CEILING" = 1 ]; then
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    cargo build --release -q -p seedkv-server --example canned_replies
    SEEDKV="$CARGO_TARGET_DIR/release/examples/canned_replies"
    LABEL=canned; MEMORY_KEYS=0
elif [ -n "${SEEDKV_BIN:-}" ]; then
    SEEDKV=$SEEDKV_BIN
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    cargo build --release -q -p seedkv-server
    SEEDKV="$CARGO_TARGET_DIR/release/seedkv-server"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do redis-cli -p "$1" ping >/dev/null 2>&1 && return 0; sleep 0.05; done; echo "server on $1 did not start" >&2; exit 1; }

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "${LOAD_FILE:-}"; }
trap cleanup EXIT

SEEDKV_PORT=$(free_port)
"${SERVER_CPU[@]}" "$SEEDKV" --port "$SEEDKV_PORT" --seed 1 2>/dev/null & PIDS+=($!); SEEDKV_PID=$!
REDIS_PORT=$(free_port)
"${SERVER_CPU[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >/dev/null & PIDS+=($!); REDIS_PID=$!
wait_port "$SEEDKV_PORT"
wait_port "$REDIS_PORT"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# verify PORT TEST PIPELINE: checks what the run left; prints a reason on failure.
verify() {
    local port=$1 test=$2 p=$3 dbsize value
    dbsize=$(redis-cli -p "$port" dbsize)
    [ "$dbsize" = 1 ] || { echo "DBSIZE $dbsize, want 1"; return 1; }
    case $test in
        set|get)
            # redis-benchmark's payload is 3 random bytes (-d 3).
            value=$(redis-cli -p "$port" strlen 'key:__rand_int__')
            [ "$value" = 3 ] || { echo "key:__rand_int__ has $value bytes, want 3"; return 1; } ;;
        incr)
            value=$(redis-cli -p "$port" get 'counter:__rand_int__')
            [ "$value" -ge "$REQUESTS" ] && [ "$value" -lt $((REQUESTS + CLIENTS * p)) ] \
                || { echo "counter $value after $REQUESTS INCRs"; return 1; } ;;
        lpush|lrange_100)
            value=$(redis-cli -p "$port" llen mylist)
            [ "$value" -ge "$REQUESTS" ] && [ "$value" -lt $((REQUESTS + CLIENTS * p)) ] \
                || { echo "LLEN mylist $value after $REQUESTS LPUSHes"; return 1; } ;;
        mset)
            value=$(redis-cli -p "$port" exists 'key:__rand_int__')
            [ "$value" = 1 ] || { echo "MSET left no key:__rand_int__"; return 1; } ;;
    esac
}

# The server's CPU time (user + system, in clock ticks) from /proc: divided
# by the requests of a run, it is what one command costs the server, a
# figure that, unlike requests/s, does not depend on how the two processes
# happen to be scheduled. Resolution: one tick (10 ms) per run.
TICKS_PER_S=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

declare -A RPS CPU
FAILURES=0
for round in $(seq 1 "$ROUNDS"); do
for p in $PIPELINES; do
for test in $(tr ',' ' ' <<<"$TESTS"); do
    order="seedkv redis"; [ $((round % 2)) = 0 ] && order="redis seedkv"
    for server in $order; do
        port=$SEEDKV_PORT; [ "$server" = redis ] && port=$REDIS_PORT
        redis-cli -p "$port" flushall >/dev/null
        [ "$test" = get ] && redis-cli -p "$port" set 'key:__rand_int__' xxx >/dev/null
        pid=$SEEDKV_PID; [ "$server" = redis ] && pid=$REDIS_PID
        cpu_before=$(cpu_ticks "$pid")
        status=0
        out=$("${BENCH_CPU[@]}" redis-benchmark -p "$port" -t "$test" -n "$REQUESTS" -c "$CLIENTS" -P "$p" -q 2>&1 | tr '\r' '\n') || status=$?
        errs=$(grep -ciE 'error|ERR ' <<<"$out" || true)
        checked=1; [ "$CEILING" = 1 ] && [ "$server" = seedkv ] && checked=0
        if [ "$status" != 0 ] || [ "$errs" != 0 ] || { [ "$checked" = 1 ] && ! why=$(verify "$port" "$test" "$p"); }; then
            echo "FAIL $server $test -P $p round $round: exit $status, $errs error lines; ${why:-}" >&2
            grep -iE 'error|ERR ' <<<"$out" | head -5 >&2 || true
            FAILURES=$((FAILURES + 1))
            continue
        fi
        name=$(tr '[:lower:]' '[:upper:]' <<<"$test")
        rps=$(grep -E "^$name[ :].*requests per second" <<<"$out" | sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' | tail -1)
        RPS["$server|$p|$name"]+="$rps "
        CPU["$server|$p|$name"]+="$(( ($(cpu_ticks "$pid") - cpu_before) * 1000000000 / TICKS_PER_S / REQUESTS )) "
    done
done
done
done

median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -g | awk '{a[NR]=$1} END{if (NR) print a[int((NR+1)/2)]}'; }

printf '\n%-11s %-4s %14s %14s %8s %12s %12s %8s\n' test P "$LABEL" redis ratio "$LABEL cpu" "redis cpu" "cpu"
RATIOS=""; LOW=""
for p in $PIPELINES; do
    for name in $(tr ',' '\n' <<<"$TESTS" | tr '[:lower:]' '[:upper:]'); do
        s=$(median <<<"${RPS["seedkv|$p|$name"]:-}")
        r=$(median <<<"${RPS["redis|$p|$name"]:-}")
        ratio=$( [ -n "$s" ] && [ -n "$r" ] && awk -v s="$s" -v r="$r" 'BEGIN{printf "%.2f", s/r}' || echo -)
        sc=$(median <<<"${CPU["seedkv|$p|$name"]:-}")
        rc=$(median <<<"${CPU["redis|$p|$name"]:-}")
        cratio=$( [ -n "$sc" ] && [ -n "$rc" ] && [ "$rc" != 0 ] && awk -v s="$sc" -v r="$rc" 'BEGIN{printf "%.2f", s/r}' || echo -)
        printf '%-11s %-4s %14s %14s %8s %12s %12s %8s\n' "$name" "$p" "${s:--}" "${r:--}" "$ratio" "${sc:--}" "${rc:--}" "$cratio"
        if [ "$ratio" != - ]; then
            RATIOS="$RATIOS $ratio"
            awk -v x="$ratio" 'BEGIN{exit !(x < 0.9)}' && LOW="$LOW $name-P$p"
        fi
    done
done
# The issue's figure: the geometric mean of the ratios, and any test below 0.9.
tr ' ' '\n' <<<"$RATIOS" | awk 'NF {l += log($1); n++} END {if (n) printf "geometric mean of %d ratios: %.3f\n", n, exp(l / n)}'
echo "tests below 0.9x:${LOW:- none}"
echo "(requests/s, median of $ROUNDS rounds; $REQUESTS requests, $CLIENTS clients; ratio = $LABEL/redis;"
echo " cpu = the server's user+system CPU ns per request, median; cpu ratio = $LABEL/redis, lower is better;"
echo " load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"

# ---- memory: 1M keys of 16 bytes with 100-byte values ----
if [ "$MEMORY_KEYS" -gt 0 ]; then
    LOAD_FILE=$(mktemp)
    python3 - "$MEMORY_KEYS" >"$LOAD_FILE" <<'EOF'
import sys
n = int(sys.argv[1])
out = sys.stdout.buffer
for i in range(n):
    key = b"key:%012d" % i                     # 16 bytes
    value = (b"v%011d" % i) * 8 + b"x" * 4     # 100 bytes, distinct per key
    out.write(b"*3\r\n$3\r\nSET\r\n$16\r\n%s\r\n$100\r\n%s\r\n" % (key, value))
EOF
    rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
    used() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1=="used_memory" {print $2}'; }
    printf '\n%-8s %10s %16s %16s %12s %12s\n' server keys used_memory rss_bytes "used/key" "rss/key"
    for server in seedkv redis; do
        port=$SEEDKV_PORT; pid=$SEEDKV_PID
        [ "$server" = redis ] && { port=$REDIS_PORT; pid=$REDIS_PID; }
        redis-cli -p "$port" flushall >/dev/null
        base_used=$(used "$port"); base_rss=$(( $(rss_kb "$pid") * 1024 ))
        piped=$(redis-cli -p "$port" --pipe <"$LOAD_FILE" 2>&1 | tr '\r' '\n')
        grep -q "errors: 0, replies: $MEMORY_KEYS" <<<"$piped" || { echo "FAIL $server load: $piped" >&2; FAILURES=$((FAILURES + 1)); continue; }
        dbsize=$(redis-cli -p "$port" dbsize)
        [ "$dbsize" = "$MEMORY_KEYS" ] || { echo "FAIL $server: DBSIZE $dbsize after loading $MEMORY_KEYS" >&2; FAILURES=$((FAILURES + 1)); continue; }
        for i in 0 1 $((MEMORY_KEYS / 2)) $((MEMORY_KEYS - 1)); do
            want=$(python3 -c "import sys; i=int(sys.argv[1]); print(('v%011d' % i) * 8 + 'xxxx')" "$i")
            got=$(redis-cli -p "$port" get "$(printf 'key:%012d' "$i")")
            [ "$got" = "$want" ] || { echo "FAIL $server: key $i reads back '$got'" >&2; FAILURES=$((FAILURES + 1)); }
        done
        u=$(used "$port"); rss=$(( $(rss_kb "$pid") * 1024 ))
        printf '%-8s %10s %16s %16s %12s %12s\n' "$server" "$dbsize" "$u" "$rss" \
            "$(( (u - base_used) / MEMORY_KEYS ))" "$(( (rss - base_rss) / MEMORY_KEYS ))"
        redis-cli -p "$port" flushall >/dev/null
    done
    echo "(bytes; per key = (after - before flush-and-load) / keys; seedkv's used_memory is its counting allocator's live bytes, Redis's is jemalloc's)"
fi

[ "$FAILURES" = 0 ] || { echo "$FAILURES failed runs (see FAIL lines above)" >&2; exit 1; }
