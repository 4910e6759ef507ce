#!/bin/sh
# Runs every fuzz target (or those named) for SECONDS each, one after the
# other, at low priority, on stable (`-s none`). New inputs go to the
# ignored corpus/TARGET/; crashes, timeouts and slow units to the ignored
# artifacts/TARGET/.
#
#   fuzz/soak.sh 600                      # every target, 10 minutes each
#   fuzz/soak.sh 3600 engine_commands     # one target, an hour
#
# Slow inputs (issue 14): an input that runs longer than TIMEOUT_S seconds
# is a crash (libFuzzer's -timeout, saved as timeout-*); one longer than
# SLOW_UNIT_S is reported and saved as slow-unit-* (-report_slow_units).
# The slowest legitimate unit (sim_schedule: a whole simulated run) takes
# about 0.2 s on a loaded machine, engine_commands and client_stream a few
# ms: 10 s is 50x that margin, and still catches a command that would
# freeze the server for minutes or hours. Override with the environment.
set -eu
cd "$(dirname "$0")"
seconds=${1:-600}
shift || true
targets=${*:-"resp_parse engine_commands client_stream sim_schedule rdb_payload rdb_file acl_rules"}
timeout_s=${TIMEOUT_S:-10}
slow_unit_s=${SLOW_UNIT_S:-1}
for t in $targets; do
    mkdir -p "corpus/$t" "seeds/$t" "regressions/$t" "found/$t"
    nice cargo fuzz run -s none "$t" "corpus/$t" "seeds/$t" "regressions/$t" "found/$t" \
        -- -max_total_time="$seconds" -timeout="$timeout_s" \
        -report_slow_units="$slow_unit_s" 2>&1 | tee "/tmp/seedkv-fuzz-$t.log" |
        grep -E 'DONE|panicked|SUMMARY|Test unit|Slowest unit|ALARM|TIMEOUT' || true
done
