#!/usr/bin/env bash
# Shrinking races and slow starts (issue 18; bench/race_shrink_bench.cc).
# Replaces the "## Shrinking races and slow starts" section of
# bench/RESULTS.md with two measurements:
#
#  1. Races: the reference servers' mutants whose bug needs two
#     connections, SEEDS seeds each: requests before and after shrinking,
#     time to the shrunk counterexample and its replay rate over REPLAYS
#     replays (the working tree, shrinking one candidate at a time as a
#     worker does by default).
#  2. Slow starts: the same findings' shrinking when every server starts
#     through a LAUNCH_DELAY_MS sleep, for the working tree with
#     SHRINK_JOBS candidates at once, for the working tree one at a time,
#     and for BASELINE_REF (default 131e188,
#     main before parallel shrinking; none skips it), built in a git
#     worktree with this benchmark overlaid. DELAY_CASES and DELAY_SEEDS
#     pick the findings (each rerun costs at least the delay).
#
# Environment: SEEDS (10), REPLAYS (20), LAUNCH_DELAY_MS (1000),
# SHRINK_JOBS (4), DELAY_CASES (webdav:5,kv:2,queue:2), DELAY_SEEDS (2),
# BASELINE_REF, BENCH_BUILD_DIR (build-bench), BENCH_JOBS (ninja -j, 1).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-10}
REPLAYS=${REPLAYS:-20}
LAUNCH_DELAY_MS=${LAUNCH_DELAY_MS:-1000}
SHRINK_JOBS=${SHRINK_JOBS:-4}
DELAY_CASES=${DELAY_CASES:-webdav:5,kv:2,queue:2}
DELAY_SEEDS=${DELAY_SEEDS:-2}
BASELINE_REF=${BASELINE_REF:-131e188}
export BENCH_JOBS=${BENCH_JOBS:-1}
BENCH_OVERLAY="bench/CMakeLists.txt bench/race_shrink_bench.cc"

tmp=$(mktemp -d /tmp/ds-race-bench-XXXXXX)
wt=""
cleanup() {
  [ -n "$wt" ] && git worktree remove --force "$wt" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== building race_shrink_bench (working tree) in $BENCH_BUILD_DIR" >&2
bench_build race_shrink_bench
machine=$(bench_machine)
base_bin=""
if [ "$BASELINE_REF" != none ]; then
  ref=$(git rev-parse --short "$BASELINE_REF")
  wt="$tmp/baseline"
  echo "== building race_shrink_bench at $ref in $wt" >&2
  bench_build_baseline "$ref" "$wt" race_shrink_bench
  base_bin="$wt/build-bench/bench/race_shrink_bench"
fi
bin="$BENCH_BUILD_DIR/bench/race_shrink_bench"
suts="$PWD/$BENCH_BUILD_DIR/tests/suts"
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
start=$(date +%s)

bench_wait_quiet
echo "== races" >&2
races=$("$bin" "$PWD" "$suts" --seeds "$SEEDS" --replays "$REPLAYS")
delay_flags=(--seeds "$DELAY_SEEDS" --replays 0 --launch-delay-ms "$LAUNCH_DELAY_MS" --cases "$DELAY_CASES"
             --shrink-seconds 600)
echo "== slow starts, working tree, $SHRINK_JOBS candidates at once" >&2
slow_now=$("$bin" "$PWD" "$suts" "${delay_flags[@]}" --shrink-jobs "$SHRINK_JOBS")
echo "== slow starts, working tree, one candidate at a time" >&2
slow_one=$("$bin" "$PWD" "$suts" "${delay_flags[@]}" --shrink-jobs 1)
slow_base="(baseline skipped)"
if [ -n "$base_bin" ]; then
  echo "== slow starts, baseline $ref" >&2
  slow_base=$("$base_bin" "$PWD" "$wt/build-bench/tests/suts" "${delay_flags[@]}")
fi
secs=$(( $(date +%s) - start ))

section="## Shrinking races and slow starts

Command: \`bash bench/run_race_shrink_bench.sh\` (SEEDS=$SEEDS REPLAYS=$REPLAYS LAUNCH_DELAY_MS=$LAUNCH_DELAY_MS SHRINK_JOBS=$SHRINK_JOBS DELAY_CASES=$DELAY_CASES DELAY_SEEDS=$DELAY_SEEDS BASELINE_REF=${BASELINE_REF}; runs \`bench/race_shrink_bench\`, Release builds)

* Date: $date; $machine
* Each seed: the first failing job from SEED*1000 on (1,000 requests, 4 connections, response timeout 1 s), shrunk with the worker's defaults (500 reruns; a candidate kept after 3 reproductions), then its input replayed on fresh servers. \"to counterexample s\": from the job's start to the shrunk input. The bar (issue 18): at most 10 requests, at least half the replays reproduce the signature, at most 60 s.
* Wall time of the whole benchmark: ${secs} s (builds excluded)

### Races (working tree, one candidate at a time)

$races

### Slow starts: every server starts ${LAUNCH_DELAY_MS} ms late (shrink budget 600 s, so both finish)

Working tree, $SHRINK_JOBS candidates at once:

$slow_now

Working tree, one candidate at a time (what the working tree's other
shrinking changes give without parallel reruns):

$slow_one

Baseline ${ref:-none}:

$slow_base"
bench_replace_section "Shrinking races and slow starts" "$section"
echo "$section"
