#!/bin/sh
# Runs every fuzz target (or those named) for SECONDS each, one after the
# other, at low priority, on stable (`-s none`). New inputs go to the
# ignored corpus/TARGET/; crashes to the ignored artifacts/TARGET/.
#
#   fuzz/soak.sh 600                      # every target, 10 minutes each
#   fuzz/soak.sh 3600 engine_commands     # one target, an hour
set -eu
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
targets=${*:-"resp_parse engine_commands client_stream sim_schedule"}
for t in $targets; do
    mkdir -p "corpus/$t" "seeds/$t" "regressions/$t"
    nice cargo fuzz run -s none "$t" "corpus/$t" "seeds/$t" "regressions/$t" \
        -- -max_total_time="$seconds" 2>&1 | tee "/tmp/seedkv-fuzz-$t.log" | grep -E 'DONE|panicked|SUMMARY|Test unit' || true
done
