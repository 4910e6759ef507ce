#!/usr/bin/env bash
# Mutation testing of the engine's core files with cargo-mutants (issue 14).
# A documented command, not CI: one mutant costs one incremental engine build
# plus the engine's tests (~30 s on a quiet 2-core machine), and the core
# files hold ~2,300 mutants, so by default it runs a stratified sample.
#
#   engine/mutants.sh phase1 [PER_FILE]   # sample ~PER_FILE mutants per file
#                                         # (0 = all), engine tests only
#   engine/mutants.sh retest              # re-test phase 1's survivors with
#                                         # the engine tests (after adding some)
#   engine/mutants.sh phase2              # re-test the survivors with the
#                                         # simulator's seeds test
#   engine/mutants.sh summary             # per-file table of all phases
#
# The sample is deterministic: for a file with N mutants it takes cargo-mutants
# shard 0/round(N/PER_FILE) in round-robin order (every k-th mutant).
# Results go to $MUTANTS_OUT (default target/mutants), one directory per file.
# The report of the last run: engine/MUTANTS.md.
# Runs in place (--in-place: cargo-mutants restores each file after its
# mutant), so don't edit the tree while it runs; check `git status` after.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${MUTANTS_OUT:-target/mutants}
FILES=(
    engine/src/dict.rs engine/src/dict/iter.rs engine/src/dict/meta.rs
    engine/src/dict/rehash.rs engine/src/dict/scan.rs engine/src/dict/slab.rs
    engine/src/commands/scan.rs
    engine/src/db.rs engine/src/commands/expire.rs engine/src/engine/cron.rs
    engine/src/resp/parse.rs
    engine/src/commands/strings/counters.rs
    engine/src/commands/lists.rs engine/src/types/list.rs
    engine/src/multi.rs
    engine/src/blocking.rs
    engine/src/pubsub.rs engine/src/commands/pubsub.rs
)
# Unoptimised engine: incremental rebuilds take ~15 s instead of ~90 s at the
# test profile's opt-level 2; the engine's tests stay fast enough.
export CARGO_PROFILE_TEST_OPT_LEVEL=0
COMMON=(--in-place --baseline skip --timeout 45 --build-timeout 600 --no-shuffle)

slug() { echo "$1" | sed 's|^engine/src/||; s|/|_|g; s|\.rs$||'; }

phase1() {
    local per_file=${1:-4}
    for f in "${FILES[@]}"; do
        local n shards=1 dir="$OUT/p1/$(slug "$f")"
        # Resumable: a file with a finished result is not run again.
        [ -s "$dir/sample" ] && continue
        n=$(cargo mutants --list -f "$f" | wc -l)
        if [ "$per_file" -gt 0 ]; then
            shards=$(( (n + per_file / 2) / per_file ))
            [ "$shards" -ge 1 ] || shards=1
        fi
        echo "== $f: $n mutants, shard 0/$shards"
        nice cargo mutants "${COMMON[@]}" -f "$f" \
            --shard "0/$shards" --sharding round-robin \
            --test-package seedkv-engine \
            -o "$dir" || true
        echo "$n $shards" > "$dir/sample"
    done
}

# A regex matching exactly the given mutant names (one per line on stdin).
names_re() {
    sed 's/[][\\.+*?(){}|^$]/\\&/g; s/^/^/; s/$/$/' | paste -sd'|'
}

# Re-tests survivors by applying cargo-mutants' own diffs and running one
# test command: cargo-mutants v27's `-F`/`-E` filters do not apply to
# mutants outside a function (struct-field deletions in a `const` spec), so
# an exact re-run of a list of mutants cannot be selected through it.
# $1: the survivor list (lines "file<TAB>diff<TAB>name"); $2: result
# directory; the rest: the test command. Writes caught.txt, missed.txt,
# timeout.txt and survivors.tsv there.
retest_with() {
    local list=$1 dir=$2
    shift 2
    rm -rf "$dir"
    mkdir -p "$dir/log"
    : > "$dir/caught.txt"; : > "$dir/missed.txt"; : > "$dir/timeout.txt"
    : > "$dir/survivors.tsv"
    # The unmutated tree first: the command must pass, or every mutant
    # would look caught. Its time is in baseline.log.
    if ! { time nice "$@"; } > "$dir/baseline.log" 2>&1; then
        echo "baseline fails: see $dir/baseline.log" >&2
        return 1
    fi
    local i=0 file diff name
    while IFS=$'\t' read -r file diff name; do
        i=$((i + 1))
        cp "$file" "$dir/original.rs"
        # Tests added since phase 1 may sit in a diff's context lines:
        # retry ignoring the context (fuzz 3) before giving up.
        if ! patch --quiet --no-backup-if-mismatch -r - "$file" < "$diff" > /dev/null &&
            ! { cp "$dir/original.rs" "$file" &&
                patch --quiet --no-backup-if-mismatch -r - -F3 "$file" < "$diff"; }; then
            cp "$dir/original.rs" "$file"
            echo "NOAPPLY  $name" | tee -a "$dir/missed.txt"
            continue
        fi
        local rc=0
        timeout "${RETEST_TIMEOUT_S:-900}" nice "$@" > "$dir/log/$i.log" 2>&1 || rc=$?
        cp "$dir/original.rs" "$file"
        if [ "$rc" -eq 0 ]; then
            echo "MISSED   $name" >&2
            echo "$name" >> "$dir/missed.txt"
            printf '%s\t%s\t%s\n' "$file" "$diff" "$name" >> "$dir/survivors.tsv"
        elif [ "$rc" -eq 124 ]; then
            echo "TIMEOUT  $name" >&2
            echo "$name" >> "$dir/timeout.txt"
        elif grep -q "error\[E[0-9]*\]\|could not compile" "$dir/log/$i.log"; then
            # Phase 1 built it, so a build failure here is the tree's.
            echo "BUILDERR $name (see $dir/log/$i.log)" >&2
            echo "$name" >> "$dir/missed.txt"
            printf '%s\t%s\t%s\n' "$file" "$diff" "$name" >> "$dir/survivors.tsv"
        else
            echo "caught   $name" >&2
            echo "$name" >> "$dir/caught.txt"
        fi
    done < "$list"
    rm -f "$dir/original.rs"
    git diff --quiet -- engine/src || echo "WARNING: engine/src differs from HEAD" >&2
}

# Phase 1's survivors as "file<TAB>diff<TAB>name" lines.
phase1_survivors() {
    for f in "${FILES[@]}"; do
        local d="$OUT/p1/$(slug "$f")/mutants.out"
        [ -f "$d/outcomes.json" ] || continue
        python3 -c '
import json, sys
d = sys.argv[1]
for o in json.load(open(d + "/outcomes.json"))["outcomes"]:
    if o["summary"] == "MissedMutant":
        m = o["scenario"]["Mutant"]
        print(m["file"], d + "/" + o["diff_path"], m["name"], sep="\t")
' "$d"
    done
}

retest() {
    phase1_survivors > "$OUT/p1.survivors.tsv"
    RETEST_TIMEOUT_S=${RETEST_TIMEOUT_S:-180} \
        retest_with "$OUT/p1.survivors.tsv" "$OUT/p1r" cargo test -p seedkv-engine
}

phase2() {
    # The survivors of the retest if it ran, else of phase 1.
    local list="$OUT/p1r/survivors.tsv"
    [ -f "$list" ] || { phase1_survivors > "$OUT/p1.survivors.tsv"; list="$OUT/p1.survivors.tsv"; }
    # The simulator optimised (it runs thousands of requests per seed); the
    # engine stays at opt-level 0 for quick rebuilds.
    retest_with "$list" "$OUT/p2" cargo test -p seedkv-sim --test seeds \
        --config profile.test.package.seedkv-sim.opt-level=2
}

summary() {
    printf '%-40s %5s %7s %6s %6s %7s %8s %7s\n' file total sampled caught missed timeout unviable kill%
    for f in "${FILES[@]}"; do
        local s d1 n shards c m t u
        s=$(slug "$f"); d1="$OUT/p1/$s/mutants.out"
        [ -d "$d1" ] || continue
        read -r n shards < "$OUT/p1/$s/sample"
        c=$(wc -l < "$d1/caught.txt"); t=$(wc -l < "$d1/timeout.txt")
        u=$(wc -l < "$d1/unviable.txt"); m=$(wc -l < "$d1/missed.txt")
        # Survivors caught by a later phase count as caught.
        local later
        for later in "$OUT/p1r" "$OUT/p2"; do
            [ -d "$later" ] || continue
            c=$((c + $(grep -c "^$f:" "$later/caught.txt" || true)))
            t=$((t + $(grep -c "^$f:" "$later/timeout.txt" || true)))
            m=$(grep -c "^$f:" "$later/missed.txt" || true)
        done
        local viable=$((c + m + t))
        local pct="-"
        [ "$viable" -gt 0 ] && pct=$(( (100 * (c + t)) / viable ))
        printf '%-40s %5s %7s %6s %6s %7s %8s %6s%%\n' "$f" "$n" $((c + m + t + u)) "$c" "$m" "$t" "$u" "$pct"
    done
}

case "${1:-}" in
    phase1) phase1 "${2:-4}" ;;
    retest) retest ;;
    phase2) phase2 ;;
    summary) summary ;;
    *) sed -n '2,20p' "$0"; exit 2 ;;
esac
