#!/usr/bin/env bash
# Shrinking a rare race (issue 18; docs/counterexample.md, "Rare races"):
# ds-ref-webdav mutant 31, whose PUT decides 201/204 as if another
# connection's change to the path in the same poll round had not happened.
# Replaces the "## Shrinking a rare race" section of bench/RESULTS.md. For
# seeds 1..SEEDS, `dualswarm test` (1,000 requests on 4 connections,
# --response-timeout 1000, --shrink-time 30, --shrink-jobs 2, then 5
# verification replays) with:
#
#  - baseline BASELINE_REF (default 5d35a92: before repetition), built in a
#    git worktree;
#  - the working tree.
#
# Both run the working tree's ds-ref-webdav (the baseline has no mutant 31)
# and the working tree's spec. Per run: the wall time from start to the
# verified counterexample, the requests before and after shrinking, the
# rounds the result is sent in, and its replays.
# Environment: SEEDS (10), BASELINE_REF, BENCH_BUILD_DIR (build-bench),
# BENCH_JOBS (ninja -j, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-10}
BASELINE_REF=${BASELINE_REF:-5d35a92}
export BENCH_JOBS=${BENCH_JOBS:-1}

tmp=$(mktemp -d /tmp/ds-rare-race-bench-XXXXXX)
wt=""
cleanup() {
  [ -n "$wt" ] && git worktree remove --force "$wt" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== building dualswarm and ds-ref-webdav (working tree) in $BENCH_BUILD_DIR" >&2
bench_build dualswarm ds-ref-webdav
machine=$(bench_machine)
ref=$(git rev-parse --short "$BASELINE_REF")
wt="$tmp/baseline"
echo "== building dualswarm at $ref in $wt" >&2
bench_build_baseline "$ref" "$wt" dualswarm
now_bin="$PWD/$BENCH_BUILD_DIR/dualswarm"
base_bin="$wt/build-bench/dualswarm"
launch="$PWD/$BENCH_BUILD_DIR/tests/suts/ds-ref-webdav --port {port} --dir {dir} --mutant 31"
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')

# run BIN SEED: one table row's cells ("passed" when the seed found nothing).
run() {
  local bin=$1 seed=$2 out="$tmp/out" t0 t1
  t0=$(date +%s.%N)
  "$bin" test --spec specs/http_webdav.dspec --launch "$launch" --seed "$seed" --steps 1000 \
    --response-timeout 1000 --shrink-time 30 --shrink-jobs 2 >"$out" 2>&1 || true
  t1=$(date +%s.%N)
  if head -1 "$out" | grep -q '^PASSED'; then
    printf 'passed | – | – | –'
    return
  fi
  local input rounds replays
  input=$(grep -m1 '^input:' "$out" | sed 's/^input: //; s/ before shrinking.*//; s/ requests (/ of /')
  rounds=$(grep -m1 -oE 'sent [0-9]+ times over' "$out" | grep -oE '[0-9]+' || echo 1)
  replays=$(grep -m1 '^replayed on fresh SUTs:' "$out" | sed 's/^replayed on fresh SUTs: //; s/ reproduced.*//')
  printf '%.1f | %s | %s | %s' "$(echo "$t1 - $t0" | bc)" "${input:--}" "$rounds" "${replays:--}"
}

bench_wait_quiet
rows=""
for seed in $(seq 1 "$SEEDS"); do
  echo "== seed $seed" >&2
  rows+="| $seed | $(run "$base_bin" "$seed") | $(run "$now_bin" "$seed") |
"
done

section="## Shrinking a rare race

Command: \`bash bench/run_rare_race_shrink_bench.sh\` (SEEDS=$SEEDS, BASELINE_REF=$ref)

* Date: $date; $machine
* Each run: \`dualswarm test --spec specs/http_webdav.dspec\` against \`ds-ref-webdav --mutant 31\` (a PUT's 201/204 decided as if another connection's change to the path in the same poll round had not happened), 1,000 requests on 4 connections, \`--response-timeout 1000 --shrink-time 30 --shrink-jobs 2\`, then 5 replays of the result on fresh servers. Both binaries run the working tree's server and spec.
* s: wall time to the verified counterexample; size: requests left of those the finding sent; rounds: how many times over the result is sent in one run (1: once); replays: of 5 that reproduced its signature. \"passed\": the seed found nothing (the race is timing-dependent).

| seed | baseline ($ref): s | size | rounds | replays | now: s | size | rounds | replays |
|--:|--:|--:|--:|--:|--:|--:|--:|--:|
$rows"
bench_replace_section "Shrinking a rare race" "$section"
echo "$section"
