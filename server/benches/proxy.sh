#!/usr/bin/env bash
# Throughput through twemproxy (Debian's nutcracker) in front of 1, 2 and 4
# seedkv-server shards, and of one seedkv-server directly, on this machine.
#
# One redis-benchmark run per (target, test, pipeline depth): SET, GET,
# INCR, LPUSH, MSET at -P 1 and -P 16 with 50 clients, keys drawn from
# -r KEYSPACE (so that they spread over the shards). A figure is printed
# only if the run reported no error and every shard, asked directly, holds
# what the run must have left (a benchmark that does not count errors
# measures the speed of failure):
#   SET, GET  the shards' DBSIZEs sum to KEYSPACE (every key drawn: with
#             requests >= 50 x KEYSPACE a miss has odds below 1e-18), and
#             every key:* holds 3 bytes; GET runs after a verified SET
#   INCR      DBSIZEs sum to KEYSPACE; the counters sum to the requests
#             (a pipelined client may send up to P-1 more)
#   LPUSH     one list, mylist, on one shard (its name has no
#             __rand_int__): LLEN sums to the requests (+ up to P-1 per client)
#   MSET      DBSIZEs sum to KEYSPACE, every key:* holds 3 bytes
# Errors: any redis-benchmark line with "error" or "ERR", but its
# "Could not fetch server CONFIG" warning (CONFIG is not proxied). Any
# failure fails the script (exit 1) after the table.
#
# Usage: server/benches/proxy.sh [requests] [clients]
# Env:   SEEDKV_BIN (a prebuilt seedkv-server), SHARDS (default "1 2 4"),
#        TESTS (default set,get,incr,lpush,mset), PIPELINES (default "1 16"),
#        KEYSPACE (default 1000), DISTRIBUTION (ketama or modula, default
#        ketama), ROUNDS (default 1; the median is shown).
#
# Nothing is pinned: the proxy, the shards and redis-benchmark share the
# machine's CPUs, which is the point (see the README's "Scaling out").
set -euo pipefail

cd "$(dirname "$0")/../.."
REQUESTS=${1:-100000}
CLIENTS=${2:-50}
SHARDS=${SHARDS:-"1 2 4"}
TESTS=${TESTS:-set,get,incr,lpush,mset}
PIPELINES=${PIPELINES:-"1 16"}
KEYSPACE=${KEYSPACE:-1000}
DISTRIBUTION=${DISTRIBUTION:-ketama}
ROUNDS=${ROUNDS:-1}

for tool in nutcracker redis-benchmark redis-cli python3; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] \
        || { echo "missing $tool (apt-get install nutcracker redis-tools)" >&2; exit 1; }
done
NUTCRACKER=$(command -v nutcracker || echo /usr/sbin/nutcracker)
[ "$REQUESTS" -ge $((50 * KEYSPACE)) ] \
    || { echo "requests must be at least 50 x KEYSPACE ($((50 * KEYSPACE))) to draw every key" >&2; exit 1; }

if [ -n "${SEEDKV_BIN:-}" ]; then
    SEEDKV=$SEEDKV_BIN
else
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}
    cargo build --release -q -p seedkv-server
    SEEDKV="$CARGO_TARGET_DIR/release/seedkv-server"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 1 300); do [ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0; sleep 0.05; done; echo "nothing answers PING on $1" >&2; exit 1; }

WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

MAX_SHARDS=$(tr ' ' '\n' <<<"$SHARDS" | sort -n | tail -1)
SHARD_PORTS=()
for i in $(seq 0 $((MAX_SHARDS - 1))); do
    port=$(free_port); mkdir -p "$WORK/shard$i"
    "$SEEDKV" --port "$port" --seed 1 --save '' --dir "$WORK/shard$i" 2>/dev/null & PIDS+=($!)
    SHARD_PORTS+=("$port")
done
for port in "${SHARD_PORTS[@]}"; do wait_port "$port"; done

# start_proxy N: nutcracker in front of the first N shards; sets PROXY_PORT
# and PROXY_PID. The configuration is the README's.
start_proxy() {
    local n=$1 i
    PROXY_PORT=$(free_port)
    {
        echo "seedkv:"
        echo "  listen: 127.0.0.1:$PROXY_PORT"
        echo "  redis: true"
        echo "  hash: fnv1a_64"
        echo "  distribution: $DISTRIBUTION"
        echo "  hash_tag: \"{}\""
        echo "  timeout: 5000"
        echo "  preconnect: true"
        echo "  auto_eject_hosts: false"
        echo "  server_connections: 1"
        echo "  servers:"
        for i in $(seq 0 $((n - 1))); do echo "   - 127.0.0.1:${SHARD_PORTS[$i]}:1 shard$i"; done
    } >"$WORK/nutcracker.yml"
    "$NUTCRACKER" -c "$WORK/nutcracker.yml" -s "$(free_port)" -a 127.0.0.1 -o "$WORK/nutcracker.log" \
        -p "$WORK/nutcracker.pid" & PROXY_PID=$!; PIDS+=("$PROXY_PID")
    wait_port "$PROXY_PORT"
}

# shard_sum N SCRIPT PATTERN: the sum over the first N shards of a script's
# integer result (run on each shard directly: scripts without keys are not
# proxied).
shard_sum() {
    local n=$1 script=$2 pattern=$3 i total=0 v
    for i in $(seq 0 $((n - 1))); do
        v=$(redis-cli -p "${SHARD_PORTS[$i]}" eval "$script" 0 "$pattern")
        total=$((total + v))
    done
    echo "$total"
}
COUNT_KEYS="return #redis.call('KEYS', ARGV[1])"
COUNT_3_BYTES="local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do if redis.call('STRLEN', k) == 3 then n = n + 1 end end return n"
SUM_COUNTERS="local s = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do s = s + tonumber(redis.call('GET', k)) end return s"
SUM_LLEN="return redis.call('LLEN', ARGV[1])"

flush() { local i; for i in $(seq 0 $(($1 - 1))); do redis-cli -p "${SHARD_PORTS[$i]}" flushall >/dev/null; done; }
dbsizes() { local i; for i in $(seq 0 $(($1 - 1))); do redis-cli -p "${SHARD_PORTS[$i]}" dbsize; done | paste -sd/; }

# verify N TEST P: checks what the run left on the first N shards; prints
# a reason on failure.
verify() {
    local n=$1 test=$2 p=$3 total want
    total=$(shard_sum "$n" "$COUNT_KEYS" '*')
    want=$KEYSPACE; [ "$test" = lpush ] && want=1
    [ "$total" = "$want" ] || { echo "the shards hold $total keys ($(dbsizes "$n")), want $want"; return 1; }
    case $test in
        set|get|mset)
            total=$(shard_sum "$n" "$COUNT_3_BYTES" 'key:*')
            [ "$total" = "$KEYSPACE" ] || { echo "$total of $KEYSPACE key:* hold 3 bytes"; return 1; } ;;
        incr)
            total=$(shard_sum "$n" "$SUM_COUNTERS" 'counter:*')
            [ "$total" -ge "$REQUESTS" ] && [ "$total" -lt $((REQUESTS + CLIENTS * p)) ] \
                || { echo "the counters sum to $total after $REQUESTS INCRs"; return 1; } ;;
        lpush)
            total=$(shard_sum "$n" "$SUM_LLEN" mylist)
            [ "$total" -ge "$REQUESTS" ] && [ "$total" -lt $((REQUESTS + CLIENTS * p)) ] \
                || { echo "LLEN mylist $total after $REQUESTS LPUSHes"; return 1; } ;;
    esac
}

# bench PORT TEST P: one redis-benchmark run; prints requests/s, or fails
# with the error lines.
bench() {
    local port=$1 test=$2 p=$3 out status=0 errs name
    out=$(redis-benchmark -p "$port" -t "$test" -n "$REQUESTS" -c "$CLIENTS" -P "$p" -r "$KEYSPACE" -q 2>&1 \
        | tr '\r' '\n') || status=$?
    errs=$(grep -iE 'error|ERR ' <<<"$out" | grep -v 'Could not fetch server CONFIG' || true)
    if [ "$status" != 0 ] || [ -n "$errs" ]; then
        echo "redis-benchmark exit $status; $(head -3 <<<"$errs")"
        return 1
    fi
    name=$(tr '[:lower:]' '[:upper:]' <<<"$test")
    grep -E "^$name[ :].*requests per second" <<<"$out" | sed -E 's/.*: ([0-9.]+) requests per second.*/\1/' | tail -1
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A RPS SPLIT
FAILURES=0
# run LABEL PORT N: every (test, pipeline) against PORT, verified on the
# first N shards.
run() {
    local label=$1 port=$2 n=$3 p test rps why
    for p in $PIPELINES; do
    for test in $(tr ',' ' ' <<<"$TESTS"); do
        flush "$n"
        if [ "$test" = get ]; then
            # GET reads what a verified SET wrote.
            if ! why=$(bench "$port" set "$p" >/dev/null) || ! why=$(verify "$n" set "$p"); then
                echo "FAIL $label GET preload -P $p: ${why:-}" >&2; FAILURES=$((FAILURES + 1)); continue
            fi
        fi
        if ! rps=$(bench "$port" "$test" "$p") || ! why=$(verify "$n" "$test" "$p"); then
            echo "FAIL $label $test -P $p: ${rps:-} ${why:-}" >&2; FAILURES=$((FAILURES + 1)); continue
        fi
        RPS["$label|$p|$test"]+="$rps "
        if [ "$test" = set ]; then SPLIT["$label"]=$(dbsizes "$n"); fi
    done
    done
}

LABELS=(direct)
for round in $(seq 1 "$ROUNDS"); do
    run direct "${SHARD_PORTS[0]}" 1
    for n in $SHARDS; do
        start_proxy "$n"
        run "$n shards" "$PROXY_PORT" "$n"
        kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null || true
        if [ "$round" = 1 ]; then LABELS+=("$n shards"); fi
    done
done

median() { tr ' ' '\n' | { grep -v '^$' || true; } | sort -g | awk '{a[NR]=$1} END{if (NR) print a[int((NR+1)/2)]}'; }

printf '\n%-6s %-3s' test P
for label in "${LABELS[@]}"; do printf ' %12s' "$label"; done
printf '\n'
for p in $PIPELINES; do
    for test in $(tr ',' ' ' <<<"$TESTS"); do
        printf '%-6s %-3s' "$(tr '[:lower:]' '[:upper:]' <<<"$test")" "$p"
        for label in "${LABELS[@]}"; do
            v=$(median <<<"${RPS["$label|$p|$test"]:-}")
            printf ' %12s' "${v:--}"
        done
        printf '\n'
    done
done
printf '%-10s' "keys/shard"
for label in "${LABELS[@]}"; do printf ' %12s' "${SPLIT[$label]:--}"; done
printf '\n'
echo "(requests/s through nutcracker $("$NUTCRACKER" -V 2>&1 | head -1 | awk '{print $NF}') ($DISTRIBUTION, fnv1a_64) to N seedkv shards,"
echo " or directly to one; $REQUESTS requests, $CLIENTS clients, -r $KEYSPACE; median of $ROUNDS round(s);"
echo " keys/shard: the SET run's DBSIZE per shard at -P ${PIPELINES##* };"
echo " load average before: $LOAD_BEFORE, after: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs)"

[ "$FAILURES" = 0 ] || { echo "$FAILURES failed runs (see FAIL lines above)" >&2; exit 1; }
