#!/usr/bin/env bash
# Coverage-guided generation (docs/coverage.md) against random generation,
# on the reference WebDAV server and specs/http_webdav.dspec: the spec
# branches covered after N requests (dualswarm test --json: coverage), for
# N in a grid, seeds 1..S, both modes; the requests each mode needs to
# reach 95 % of the branches any run reached; and requests to find
# reference-server mutants. Replaces the "## Coverage-guided generation"
# section of bench/RESULTS.md.
#
#   bash bench/run_coverage_guided_bench.sh [SEEDS]     (default 20)
#
# The baseline is random generation in the same run (the same binary
# without --coverage-guided): guidance has no earlier commit to compare with.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${1:-20}
GRID="10 25 50 100 200 400"
MUTANTS="2 3 14 15"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
ninja -C build dualswarm ds-ref-webdav >/dev/null
bench_wait_quiet
machine=$(bench_machine engine)
launch="build/tests/suts/ds-ref-webdav --port {port} --dir {dir}"
tmp=$(mktemp -d /tmp/ds-guided-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# covered MODE N SEED: the ids of the branches covered, comma-separated.
run() {
  build/dualswarm test --spec specs/http_webdav.dspec --launch "$launch" --steps "$2" --seed "$3" --no-shrink --json \
    $([ "$1" = guided ] && echo --coverage-guided) 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(",".join(map(str, d["coverage"]["branches"])))'
}
for mode in random guided; do
  for n in $GRID; do
    for s in $(seq 1 "$SEEDS"); do echo "$mode $n $s $(run "$mode" "$n" "$s")"; done
  done
done > "$tmp/runs"
read -r total < <(build/dualswarm test --spec specs/http_webdav.dspec --launch "$launch" --steps 1 --no-shrink --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["coverage"]["total"])')
table=$(python3 - "$tmp/runs" "$GRID" "$SEEDS" "$total" <<'PY'
import statistics, sys
path, grid, seeds, total = sys.argv[1], [int(x) for x in sys.argv[2].split()], int(sys.argv[3]), int(sys.argv[4])
runs = {}
reached = set()
for line in open(path):
    parts = line.split()
    mode, n, s = parts[0], int(parts[1]), int(parts[2])
    ids = set(int(x) for x in parts[3].split(",")) if len(parts) > 3 and parts[3] else set()
    runs[(mode, n, s)] = ids
    reached |= ids
goal = 0.95 * len(reached)
print("| requests | random: median branches | guided: median branches |")
print("|---|---|---|")
for n in grid:
    med = lambda m: statistics.median(len(runs[(m, n, s)]) for s in range(1, seeds + 1))
    print(f"| {n} | {med('random'):g} | {med('guided'):g} |")
def to_goal(mode):
    firsts = []
    for s in range(1, seeds + 1):
        hit = [n for n in grid if len(runs[(mode, n, s)]) >= goal]
        firsts.append(hit[0] if hit else float("inf"))
    return statistics.median(firsts), sum(1 for f in firsts if f != float("inf"))
r, g = to_goal("random"), to_goal("guided")
print()
print(f"Branches: {total} in the spec, {len(reached)} reached by some run (the reachable ones, as far as measured); 95 % of them: {goal:.1f}.")
print(f"Requests to reach 95 % (median over {seeds} seeds, smallest N of the grid): random {r[0]:g} ({r[1]}/{seeds} seeds got there within {grid[-1]}), guided {g[0]:g} ({g[1]}/{seeds}).")
PY
)
mutant_rows() {
  for m in $MUTANTS; do
    for mode in random guided; do
      lines=$(for s in $(seq 1 "$SEEDS"); do
        build/dualswarm test --spec specs/http_webdav.dspec --launch "$launch --mutant $m" --steps 2000 --seed "$s" \
          --no-shrink $([ "$mode" = guided ] && echo --coverage-guided) 2>&1 | bench_last_line || true
      done)
      found=$(echo "$lines" | grep -c "safety after" || true)
      reqs=$(echo "$lines" | sed -n 's/.*safety after \([0-9]*\) requests.*/\1/p')
      echo "| $m | $mode | $found/$SEEDS | $(echo "$reqs" | bench_median) |"
    done
  done
}
mutants=$(mutant_rows)

section=$(cat <<MD
## Coverage-guided generation

Command: \`bash bench/run_coverage_guided_bench.sh $SEEDS\` (\`build/dualswarm test --spec specs/http_webdav.dspec --launch "$launch" --steps N --seed S --no-shrink --json [--coverage-guided]\`)

* Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $machine
* Spec coverage (docs/coverage.md) of runs of N requests at 4 connections, seeds 1-$SEEDS, with random generation (the baseline: the same binary without the flag) and guided (8 candidates per request).

$table

Reference-server mutants (tests/suts/MUTANTS.md), seeds 1-$SEEDS, up to 2,000 requests:

| mutant | generation | found | median requests to the finding |
|---|---|---|---|
$mutants
MD
)
echo "$section"
bench_replace_section "Coverage-guided generation" "$section"
