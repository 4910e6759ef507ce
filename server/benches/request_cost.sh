#!/usr/bin/env bash
# Load-independent cost of one request: the server's and redis-benchmark's CPU time,
# syscalls and context switches per request (perf stat software events), the
# server pinned on CPU 1 and the benchmark on CPU 0 as in compare.sh.
# Usage: server/benches/request_cost.sh SEEDKV_BINARY|redis TEST P [REQUESTS]
set -u
bin=$1; test=$2; p=$3; n=${4:-200000}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
if [ "$bin" = redis ]; then
  taskset -c 1 redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --dir $dir >/dev/null & pid=$!
else
  (cd $dir && exec taskset -c 1 $bin --port $port --seed 1 2>/dev/null) & pid=$!
fi
for i in $(seq 100); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.05; done
[ "$test" = get ] && redis-cli -p $port set key:__rand_int__ xxx >/dev/null
perf stat -e task-clock,context-switches,raw_syscalls:sys_enter -p $pid -o $dir/perf.txt & perfpid=$!
sleep 0.2
perf stat -e task-clock,context-switches,raw_syscalls:sys_enter -o $dir/bperf.txt taskset -c 0 redis-benchmark -p $port -t $test -n $n -c 50 -P $p -q 2>&1 | tr '\r' '\n' | grep 'requests per second' | tail -1 > $dir/out
kill -INT $perfpid; wait $perfpid 2>/dev/null
kill $pid; wait $pid 2>/dev/null
get() { awk -v k=$2 '$0 ~ k {gsub(",","",$1); print $1}' $1; }
awk -v n=$n -v name="$(basename $bin) $test P$p" -v tc=$(get $dir/perf.txt task-clock) -v cs=$(get $dir/perf.txt context-switches) -v sc=$(get $dir/perf.txt raw_syscalls) \
  -v btc=$(get $dir/bperf.txt task-clock) -v bcs=$(get $dir/bperf.txt context-switches) -v bsc=$(get $dir/bperf.txt raw_syscalls) -v out="$(cat $dir/out | sed 's/requests per second.*/rps/')" \
  'BEGIN {printf "%-24s srv %6.0f ns %5.3f sc %6.4f cs | bench %6.0f ns %5.3f sc %6.4f cs | %s\n", name, tc*1e6/n, sc/n, cs/n, btc*1e6/n, bsc/n, bcs/n, out}'
rm -rf $dir
