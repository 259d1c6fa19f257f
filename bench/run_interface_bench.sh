#!/usr/bin/env bash
# Testing a library through its interface (docs/interfaces.md): calls per
# second and values built per second, for the reference AVL set (Python
# shim) with the working tree's dualswarm and BASELINE_REF's, and for the
# reference heap (C++ shim) with the working tree's. Replaces the
# "## Library interfaces: calls and values per second" section of
# bench/RESULTS.md.
#
#   BASELINE_REF=<commit> [SEEDS=5] [STEPS=20000] bash bench/run_interface_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
BASELINE_REF=${BASELINE_REF:?set BASELINE_REF to the commit to compare with}
SEEDS=${SEEDS:-5}
STEPS=${STEPS:-20000}
bench_build dualswarm ds-lib-heap
wt=$(mktemp -d /tmp/ds-iface-baseline.XXXXXX)
rmdir "$wt"
trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || true' EXIT
bench_build_baseline "$BASELINE_REF" "$wt" dualswarm
machine=$(bench_machine)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
bench_wait_quiet
logs=$(mktemp -d /tmp/ds-iface-bench.XXXXXX)

# run BINARY SPEC LAUNCH SEED [FLAGS]: "CALLS SECONDS VALUES KIND" of one
# run (VALUES "-" when the binary does not report it).
run() {
  local log="$logs/$RANDOM-$4.json"
  # shellcheck disable=SC2086
  timeout 300 "$1" test --spec "$2" --launch "$3" --connections 1 --steps "$STEPS" --seed "$4" ${5:-} --no-shrink --json \
    >"$log" 2>/dev/null || true
  python3 - "$log" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    print(d["requests"], d["seconds"], d.get("values_built", "-"), d["kind"])
except Exception:
    print("- - - error")
PY
}

# summary NAME BINARY SPEC LAUNCH [FLAGS]: a table row over SEEDS runs.
summary() {
  local calls=0 secs=0 values=0 kinds="" have_values=1
  for seed in $(seq 1 "$SEEDS"); do
    read -r c s v k <<<"$(run "$2" "$3" "$4" "$seed" "${5:-}")"
    kinds+="$k "
    [ "$c" = "-" ] && continue
    calls=$((calls + c))
    secs=$(python3 -c "print($secs + $s)")
    if [ "$v" = "-" ]; then have_values=0; else values=$((values + v)); fi
  done
  python3 - "$1" "$calls" "$secs" "$values" "$have_values" "$kinds" <<'PY'
import sys
name, calls, secs, values, have, kinds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1", sys.argv[6].split()
outcome = ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds)))
cps = f"{calls / secs:,.0f}" if secs > 0 else "-"
vps = f"{values / secs:,.0f}" if secs > 0 and have else "-"
print(f"| {name} | {calls:,} | {secs:.2f} | {cps} | {values if have else '-'} | {vps} | {outcome} |")
PY
}

start=$(date +%s)
avl_launch="python3 $PWD/shims/python/dualswarm_shim.py --port {port} $PWD/tests/suts/pylib/avl_set.py"
base_avl=$(summary "AVL set (Python shim), baseline $BASELINE_REF" "$wt/$BENCH_BUILD_DIR/dualswarm" "$wt/specs/avl_set.dspec" "$avl_launch")
# The baseline's pools keep values up to 32 calls deep; now the depth is
# drawn from the seed unless --pool-depth says it: the same 32 for both.
now_avl=$(summary "AVL set (Python shim), now" "$PWD/$BENCH_BUILD_DIR/dualswarm" "$PWD/specs/avl_set.dspec" \
  "$avl_launch" "--pool-depth 32")
now_heap=$(summary "heap (C++ shim), now" "$PWD/$BENCH_BUILD_DIR/dualswarm" "$PWD/specs/heap.dspec" \
  "$PWD/$BENCH_BUILD_DIR/tests/suts/ds-lib-heap --port {port}" "--pool-depth 32")
secs=$(($(date +%s) - start))
rm -rf "$logs"
title="Library interfaces: calls and values per second"
section="## $title

Command: \`BASELINE_REF=$BASELINE_REF SEEDS=$SEEDS STEPS=$STEPS bash bench/run_interface_bench.sh\` (Release builds of \`dualswarm\`: the working tree's and $BASELINE_REF's)

* Date: $date; $machine
* Each run: \`dualswarm test --connections 1 --steps $STEPS --no-shrink --json\` (now: with \`--pool-depth 32\`, the baseline's fixed depth) against a correct reference library, seeds 1 to $SEEDS; time is the run's own (\`seconds\`: launch to verdict, the checker's law monitor included). Values built: handles the building calls returned (\`values_built\`; each call makes a new value, equal contents counted each time, those deeper than the pool depth included; the baseline does not report it).
* Wall time: ${secs} s

| library, dualswarm | calls | seconds | calls/s | values built | values built/s | outcomes |
|---|--:|--:|--:|--:|--:|---|
$base_avl
$now_avl
$now_heap"
bench_replace_section "$title" "$section"
echo "$section"
