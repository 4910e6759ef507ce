#!/usr/bin/env bash
# User-space instructions per request under callgrind (independent of machine
# load): the server runs under valgrind, a warm-up run, counters zeroed, the
# measured redis-benchmark run, a dump. Usage:
# server/benches/request_instructions.sh SEEDKV_BINARY|redis TEST P [REQUESTS]
set -u
bin=$1; test=$2; p=$3; n=${4:-50000}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
if [ "$bin" = redis ]; then
  (cd $dir && exec valgrind --tool=callgrind --callgrind-out-file=$dir/cg.%p redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no --dir $dir >/dev/null 2>&1) & pid=$!
else
  (cd $dir && exec valgrind --tool=callgrind --callgrind-out-file=$dir/cg.%p $bin --port $port --seed 1 >/dev/null 2>&1) & pid=$!
fi
for i in $(seq 400); do redis-cli -p $port ping >/dev/null 2>&1 && break; sleep 0.1; done
[ "$test" = get ] && redis-cli -p $port set key:__rand_int__ xxx >/dev/null
redis-benchmark -p $port -t $test -n 2000 -c 50 -P $p -q >/dev/null 2>&1
callgrind_control -z $pid >/dev/null 2>&1
redis-benchmark -p $port -t $test -n $n -c 50 -P $p -q >/dev/null 2>&1
callgrind_control -d $pid >/dev/null 2>&1
sleep 0.5
kill $pid; wait $pid 2>/dev/null
# the dump after -d is cg.PID.1 (per-thread parts may exist; sum all .1 files' totals)
tot=0
for f in $dir/cg.*.1*; do t=$(grep -E '^(summary|totals):' $f | head -1 | awk '{print $2}'); tot=$((tot + ${t:-0})); done
printf "%-24s %8.0f instr/req\n" "$(basename $bin) $test P$p" $(echo "$tot / $n" | bc -l)
[ -n "${KEEP:-}" ] && cp $dir/cg.*.1* $KEEP/; rm -rf $dir
