#!/usr/bin/env bash
# Shrinking against a real server that is slow to stop: Debian's apache2 as
# a WebDAV server (tests/real/apache_webdav.sh; issue 18, cheaper reruns).
# Replaces the "## Shrinking against Apache: background stops and resets"
# section of bench/RESULTS.md. For each finding below and seeds 1..SEEDS,
# the wall time of `dualswarm test` from start to the shrunk and verified
# counterexample (5 replays on fresh servers), its size and reruns:
#
#  - baseline BASELINE_REF (default 321a30d: before shrinking stopped each
#    rerun's SUT in the background), built in a git worktree;
#  - the working tree;
#  - the working tree with --reset-command 'find {dir}/root -mindepth 1
#    -delete' (reruns reuse running servers).
#
# Findings: "sequential" (the shipped spec on 1 connection: If-None-Match
# compared strongly) and "race" (the spec on two paths, plain PUT and
# DELETE only, 4 connections without pipelining: concurrent creates).
# Environment: SEEDS (3), BASELINE_REF, BENCH_BUILD_DIR (build-bench),
# BENCH_JOBS (ninja -j, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-3}
BASELINE_REF=${BASELINE_REF:-321a30d}
export BENCH_JOBS=${BENCH_JOBS:-1}

tmp=$(mktemp -d /tmp/ds-real-shrink-bench-XXXXXX)
wt=""
cleanup() {
  [ -n "$wt" ] && git worktree remove --force "$wt" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== building dualswarm (working tree) in $BENCH_BUILD_DIR" >&2
bench_build dualswarm
machine=$(bench_machine)
ref=$(git rev-parse --short "$BASELINE_REF")
wt="$tmp/baseline"
echo "== building dualswarm at $ref in $wt" >&2
bench_build_baseline "$ref" "$wt" dualswarm
now_bin="$PWD/$BENCH_BUILD_DIR/dualswarm"
base_bin="$wt/build-bench/dualswarm"
launch="sh $PWD/tests/real/apache_webdav.sh {port} {dir}"
reset='find {dir}/root -mindepth 1 -delete'
sed 's|let path = freq { 8: pick(keys(files)), 2: "/" + random_word(3) };|let path = freq { 1: "/a", 1: "/b" };|' \
  specs/http_webdav.dspec > "$tmp/two_paths.dspec"
grep -q 'freq { 1: "/a", 1: "/b" }' "$tmp/two_paths.dspec" || { echo "the spec's path choice changed" >&2; exit 1; }
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')

# run BIN FINDING SEED [RESET]: one table row's cells.
run() {
  local bin=$1 finding=$2 seed=$3 reset_cmd=${4:-} out="$tmp/out" t0 t1
  local args=(test --launch "$launch" --seed "$seed" --steps 2000 --shrink-time 120)
  if [ "$finding" = sequential ]; then
    args+=(--spec specs/http_webdav.dspec --connections 1)
  else
    args+=(--spec "$tmp/two_paths.dspec" --connections 4 --max-per-connection 1 --feature-mask 2:b7)
  fi
  [ -n "$reset_cmd" ] && args+=(--reset-command "$reset_cmd")
  t0=$(date +%s.%N)
  "$bin" "${args[@]}" >"$out" 2>&1 || true
  t1=$(date +%s.%N)
  local input replays
  input=$(grep -m1 '^input:' "$out" | sed 's/^input: //')
  replays=$(grep -m1 '^replayed on fresh SUTs:' "$out" | sed 's/^replayed on fresh SUTs: //; s/ (flaky.*//')
  printf '%.1f | %s | %s' "$(echo "$t1 - $t0" | bc)" "${input:--}" "${replays:--}"
}

bench_wait_quiet
rows=""
for finding in sequential race; do
  for seed in $(seq 1 "$SEEDS"); do
    echo "== $finding seed $seed" >&2
    rows+="| $finding | $seed | $(run "$base_bin" "$finding" "$seed") | $(run "$now_bin" "$finding" "$seed") | $(run "$now_bin" "$finding" "$seed" "$reset") |
"
  done
done

section="## Shrinking against Apache: background stops and resets

Command: \`bash bench/run_real_shrink_bench.sh\` (SEEDS=$SEEDS BASELINE_REF=$BASELINE_REF; Release builds of \`dualswarm\`)

* Date: $date; $machine; $(apache2 -v 2>/dev/null | head -1 | sed 's/Server version: //')
* For each build: wall seconds of \`dualswarm test\` (find, shrink with 2 candidates at once, 5 verification replays on fresh servers), the counterexample's input line, and the replays that reproduced.
* sequential: \`specs/http_webdav.dspec\` on 1 connection (If-None-Match compared strongly on PUT); race: the spec on two paths, plain PUT and DELETE only (\`--feature-mask 2:b7\`), 4 connections, \`--max-per-connection 1\` (concurrent creates both answered 201). docs/real-servers.md explains both.
* Baseline $ref stops every rerun's Apache before the next (0.5-2.5 s after SIGTERM); the working tree stops them in the background; with \`--reset-command '$reset'\` reruns reuse running servers.

| finding | seed | $ref s | $ref input | $ref replays | now s | now input | now replays | reset s | reset input | reset replays |
|---|---|---|---|---|---|---|---|---|---|---|
$rows"
bench_replace_section "Shrinking against Apache: background stops and resets" "$section"
echo "$section"
