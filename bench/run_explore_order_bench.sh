#!/usr/bin/env bash
# Exploration-order swarms (docs/explore.md): N `dualswarm explore` jobs
# that differ by action order against N jobs with one order, on a planted
# deep bug (bench/specs/deep_bug.dspec). Jobs of a swarm run in parallel,
# so a swarm finds the bug when its first job does: the swarm's cost is the
# minimum over its jobs of the states each explored (and seconds spent)
# before the first violation. K swarms of each kind; medians over them.
# Replaces the "## Exploration-order swarms" section of bench/RESULTS.md.
#
#   bash bench/run_explore_order_bench.sh [K] [N]     (default K=20, N=8)
#
# "One order": swarm k runs its N jobs with --order random --seed k (the
# same permutations: N copies of one search). "Different orders": swarm k
# runs seeds k*N+1 .. k*N+N. Also first and last, one job each. The
# baseline is the one-order swarm of the same run: explore has no earlier
# commit to compare with.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
K=${1:-20}
N=${2:-8}
SPEC=bench/specs/deep_bug.dspec
FLAGS="--depth 12 --stop-at-first --time 60 --json"
# The CLI as a user builds it (build/, like the other CLI benchmarks).
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
ninja -C build dualswarm >/dev/null
bench_wait_quiet
machine=$(bench_machine engine bench/specs/deep_bug.dspec)

# job ORDER SEED: "STATES SECONDS" to the first violation ("inf inf": none).
job() {
  { build/dualswarm explore --spec "$SPEC" $FLAGS --order "$1" --seed "$2" || true; } | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(("%d %.6f" % (d["states"], d["seconds_to_first_violation"])) if d["violations"] else "inf inf")'
}
# swarm_min LINES: the smallest states and seconds over the jobs' lines.
swarm_min() { sort -g -k1 | head -1; }

one=() diff=()
for k in $(seq 1 "$K"); do
  r=$(job random "$k")
  one+=("$r")
  best=$(for j in $(seq 1 "$N"); do job random $((k * N + j)); done | swarm_min)
  diff+=("$best")
  echo "swarm $k: one order $r; different orders $best" >&2
done
one_states=$(printf '%s\n' "${one[@]}" | awk '{print $1}' | bench_median)
one_secs=$(printf '%s\n' "${one[@]}" | awk '{print $2}' | bench_median)
diff_states=$(printf '%s\n' "${diff[@]}" | awk '{print $1}' | bench_median)
diff_secs=$(printf '%s\n' "${diff[@]}" | awk '{print $2}' | bench_median)
first=$(job first 1)
last=$(job last 1)

section=$(cat <<MD
## Exploration-order swarms

Command: \`bash bench/run_explore_order_bench.sh $K $N\` (\`build/dualswarm explore --spec $SPEC $FLAGS --order ORDER --seed S\`)

* Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $machine
* The spec: six counters (mod 6) that requests a..f turn, and an assert that only a \`step\` breaks once the counters read a=3, b=2, c=4, d=1 (at least 11 requests in; 7 requests per state). Each job: depth-first to depth 12, stops at the first violation.
* A swarm's cost is the minimum over its $N jobs (they run in parallel): states explored and seconds until the first violation. $K swarms of each kind; medians over them. *One order*: the $N jobs of swarm k all use \`--order random --seed k\` (one search $N times over: the baseline). *Different orders*: seeds k·$N+1 .. k·$N+$N.

| swarm of $N jobs | median states to the bug | median seconds to the bug |
|---|---|---|
| one order (baseline) | $one_states | $one_secs |
| different orders | $diff_states | $diff_secs |
| one job, \`--order first\` | $(echo "$first" | awk '{print $1}') | $(echo "$first" | awk '{print $2}') |
| one job, \`--order last\` | $(echo "$last" | awk '{print $1}') | $(echo "$last" | awk '{print $2}') |
MD
)
echo "$section"
bench_replace_section "Exploration-order swarms" "$section"
