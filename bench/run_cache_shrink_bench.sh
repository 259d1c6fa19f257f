#!/usr/bin/env bash
# Shrinking an intermediary's findings: for each mutant of the reference
# cache (tests/suts/cache_server.cc, MUTANTS.md) and SEEDS seeds, how small
# `dualswarm test` shrinks the finding and how many of its 5 verification
# replays reproduce it, with the working tree's dualswarm and with
# BASELINE_REF's, in one run (the two alternate, mutant by mutant).
# Replaces the "## Shrinking an intermediary's findings" section of
# bench/RESULTS.md.
#
#   BASELINE_REF=<commit> SEEDS=2 SHRINK_SECONDS=20 [MUTANTS="7"] bash bench/run_cache_shrink_bench.sh
#
# MUTANTS (default all, 1 to 9) names the mutants to run.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
BASELINE_REF=${BASELINE_REF:?set BASELINE_REF to the commit to compare with}
SEEDS=${SEEDS:-2}
SHRINK_SECONDS=${SHRINK_SECONDS:-20}
MUTANTS=${MUTANTS:-1 2 3 4 5 6 7 8 9}
bench_build dualswarm ds-ref-cache
wt=$(mktemp -d /tmp/ds-shrink-baseline.XXXXXX)
rmdir "$wt"
trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
bench_build_baseline "$BASELINE_REF" "$wt" dualswarm
machine=$(bench_machine)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
bench_wait_quiet
ref_cache="$PWD/$BENCH_BUILD_DIR/tests/suts/ds-ref-cache"
logs=$(mktemp -d /tmp/ds-shrink-bench.XXXXXX)

# run BINARY MUTANT SEED SPECS: "SIZE ORIGINAL REPRODUCED COMPLETE" of the
# shrunk finding; SPECS is the binary's own specs directory (a baseline
# cannot parse the language features its commit did not have).
run() {
  local log="$logs/$RANDOM-$2-$3.log"
  timeout 180 "$1" test --spec "$4/http_cache.dspec" --origins 1 \
    --launch "$ref_cache --port {port} --origin-port {origin_port} --origin-connections 2 --mutant $2" \
    --seed "$3" --steps 1000 --shrink-time "$SHRINK_SECONDS" >"$log" 2>&1 || true
  python3 - "$log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^input: (\d+) requests \((\d+) before shrinking[^)]*\)", text, re.M)
r = re.search(r"replayed on fresh SUTs: (\d+) of (\d+)", text)
if not m or not r:
    print("- - - -")
else:
    print(m.group(1), m.group(2), r.group(1), "no" if "stopped by its budget" in m.group(0) else "yes")
PY
}

rows=""
sizes_base=()
sizes_now=()
sure_base=0
sure_now=0
done_base=0
small_base=0
small_now=0
done_now=0
runs=0
start=$(date +%s)
for m in $MUTANTS; do
  for seed in $(seq 1 "$SEEDS"); do
    read -r bs bo br bc <<<"$(run "$wt/$BENCH_BUILD_DIR/dualswarm" "$m" "$seed" "$wt/specs")"
    read -r ns no nr nc <<<"$(run "$PWD/$BENCH_BUILD_DIR/dualswarm" "$m" "$seed" "$PWD/specs")"
    rows+="| $m | $seed | $bs of $bo | $br of 5 | $bc | $ns of $no | $nr of 5 | $nc |"$'\n'
    runs=$((runs + 1))
    [ "$bs" != "-" ] && sizes_base+=("$bs")
    [ "$ns" != "-" ] && sizes_now+=("$ns")
    [ "$br" = "5" ] && sure_base=$((sure_base + 1))
    [ "$nr" = "5" ] && sure_now=$((sure_now + 1))
    [ "$bs" != "-" ] && [ "$bs" -le 8 ] && [ "$br" = "5" ] && small_base=$((small_base + 1))
    [ "$ns" != "-" ] && [ "$ns" -le 8 ] && [ "$nr" = "5" ] && small_now=$((small_now + 1))
    [ "$bc" = "yes" ] && done_base=$((done_base + 1))
    [ "$nc" = "yes" ] && done_now=$((done_now + 1))
  done
done
secs=$(($(date +%s) - start))
median_base=$(printf '%s\n' "${sizes_base[@]}" | bench_median)
median_now=$(printf '%s\n' "${sizes_now[@]}" | bench_median)
rm -rf "$logs"
title="Shrinking an intermediary's findings"
[ "$MUTANTS" != "1 2 3 4 5 6 7 8 9" ] && title="$title: mutant $MUTANTS"
section="## $title

Command: \`BASELINE_REF=$BASELINE_REF SEEDS=$SEEDS SHRINK_SECONDS=$SHRINK_SECONDS MUTANTS=\"$MUTANTS\" bash bench/run_cache_shrink_bench.sh\` (Release builds of \`dualswarm\`: the working tree's and $BASELINE_REF's)

* Date: $date; $machine
* Each run: \`dualswarm test --spec specs/http_cache.dspec --origins 1\` against \`ds-ref-cache --mutant M --origin-connections 2\`, 1,000 requests, 4 connections, \`--shrink-time $SHRINK_SECONDS\`; then the 5 verification replays of the shrunk input. \"size\": requests left of those sent; \"complete\": shrinking ended by itself, not by its budget.
* Wall time of both: ${secs} s, $runs runs each

| | baseline ($BASELINE_REF) | now |
|---|--:|--:|
| median size | $median_base | $median_now |
| runs whose 5 replays all reproduced | $sure_base of $runs | $sure_now of $runs |
| runs whose shrinking completed | $done_base of $runs | $done_now of $runs |
| runs shrunk to at most 8 requests that all 5 replays reproduced | $small_base of $runs | $small_now of $runs |

| mutant | seed | baseline: size | baseline: replays | baseline: complete | now: size | now: replays | now: complete |
|--:|--:|--:|--:|---|--:|--:|---|
$rows"
bench_replace_section "$title" "$section"
echo "$section"
