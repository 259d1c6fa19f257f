#!/usr/bin/env bash
# The reference primary-backup kv (ds-ref-replkv, 3 nodes, 6 round-robin
# connections, specs/kv.dspec) under the nemesis, through the CLI as a user
# runs it (--json, --no-shrink): the correct server under pause, kill and
# partition together (false alarms: must be 0), each fault-only mutant
# under the fault that shows it (time and requests to the finding), and
# each mutant without faults (how often it shows anyway); then on 5 nodes
# (10 connections) under splits and bridges. SEEDS seeds each.
# Prints a Markdown section for bench/RESULTS.md.
# Usage: bash bench/run_replkv_fault_bench.sh   (SEEDS=20 by default;
#        FIVE_ONLY=1: only the 5-node table, as a subsection)
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-20}
CLI=build/dualswarm
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
ninja -C build dualswarm ds-ref-replkv >/dev/null
FAULTS="--fault-interval 300 --fault-duration 200"

# run MUTANT STEPS [nemesis args...]: one JSON result line per seed, on
# NODES nodes (default 3) with 2 connections each.
run() {
  local mutant=$1 steps=$2 nodes=${NODES:-3}
  shift 2
  for s in $(seq 1 "$SEEDS"); do
    $CLI test --spec specs/kv.dspec --adapter jsonl --nodes "$nodes" --connections $((2 * nodes)) --steps "$steps" --seed "$s" \
      --launch "build/tests/suts/ds-ref-replkv --port {port} --node {node} --peers {peers} --peer-port {peer_port} --dir {dir} --mutant $mutant" \
      --no-shrink --json --quiet "$@" 2>/dev/null | tail -1 || true
  done
}

# row LABEL: a table row from the JSON lines on stdin.
row() { python3 bench/json_row.py findings "$1"; }

five_nodes() {
  echo "### 5 nodes: splits and bridges"
  echo
  echo "* Date: $(date -u '+%Y-%m-%d %H:%M:%S') UTC; load average $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD); \`--nodes 5 --connections 10\`, the same faults' timing; a split cuts a minority of 2 from the other 3, a bridge two pairs from each other through the fifth node (docs/clusters.md)"
  echo
  echo "| server, faults | runs | outcomes | findings | s to finding (median / max) | requests to finding (median / max) | faults (median / max) |"
  echo "|---|--:|---|--:|--:|--:|--:|"
  NODES=5 run 0 8000 --nemesis split,bridge $FAULTS | row "correct, split+bridge, 8000 requests"
  NODES=5 run 2 8000 --nemesis split $FAULTS | row "mutant 2 (stale backup reads), split"
  NODES=5 run 3 8000 --nemesis split $FAULTS | row "mutant 3 (split brain), split"
  NODES=5 run 3 8000 --nemesis bridge $FAULTS | row "mutant 3 (split brain), bridge"
}
if [ -n "${FIVE_ONLY:-}" ]; then
  five_nodes
  exit 0
fi

echo "## Replicated kv under faults"
echo
echo "Command: \`bash bench/run_replkv_fault_bench.sh\` (SEEDS=$SEEDS; build/ is $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' build/CMakeCache.txt))"
echo
echo "* Date: $(date -u '+%Y-%m-%d %H:%M:%S') UTC; machine: nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD)"
echo "* Every run: \`dualswarm test --spec specs/kv.dspec --nodes 3 --connections 6 --no-shrink --json\` against \`ds-ref-replkv\` (tests/suts/MUTANTS.md), seeds 1..$SEEDS; with faults \`$FAULTS\` (a fault every 150-450 ms after the last heal, lasting 200 ms, on a node drawn from the seed)."
echo "* *s to finding*: the tester's own time (\`seconds\`: from the first request to the verdict; launching the 3 nodes is not counted); *faults*: faults injected before the verdict (all runs where nothing was found)."
echo
echo "| server, faults | runs | outcomes | findings | s to finding (median / max) | requests to finding (median / max) | faults (median / max) |"
echo "|---|--:|---|--:|--:|--:|--:|"
run 0 8000 --nemesis pause,kill,partition $FAULTS | row "correct, pause+kill+partition, 8000 requests"
run 1 8000 --nemesis kill $FAULTS | row "mutant 1 (lost on restart), kill"
run 2 8000 --nemesis pause $FAULTS | row "mutant 2 (stale backup reads), pause"
run 2 8000 --nemesis partition $FAULTS | row "mutant 2 (stale backup reads), partition"
run 3 8000 --nemesis partition $FAULTS | row "mutant 3 (split brain), partition"
run 3 8000 --nemesis kill $FAULTS | row "mutant 3 (split brain), kill"
for m in 1 2 3; do
  run $m 4000 | row "mutant $m, no faults, 4000 requests"
done
echo
five_nodes
