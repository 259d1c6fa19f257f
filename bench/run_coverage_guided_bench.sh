#!/usr/bin/env bash
# Coverage-guided generation (docs/coverage.md) against random generation:
# the spec branches covered after N requests (dualswarm test --json:
# coverage), for N in a grid, seeds 1..S, in three modes — random (no
# flag), drawn (--coverage-guided --no-concolic: 8 drawn candidates) and
# concolic (--coverage-guided: the 8 drawn and one whose draws Z3 solved
# for) —; the requests each mode needs to reach 95 % of the branches any
# run reached; and requests to find mutants. Two systems: the reference
# WebDAV server (specs/http_webdav.dspec), and bench/suts/ledger_server.py
# (bench/specs/ledger.dspec: branches behind rare values). Replaces the
# "## Coverage-guided generation" section of bench/RESULTS.md.
#
#   bash bench/run_coverage_guided_bench.sh [SEEDS]     (default 20)
#
# The baseline is random generation in the same run (the same binary
# without --coverage-guided), and drawn candidates only (--no-concolic).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${1:-20}
MODES="random drawn concolic"
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
ninja -C build dualswarm ds-ref-webdav >/dev/null
bench_wait_quiet
machine=$(bench_machine engine)
tmp=$(mktemp -d /tmp/ds-guided-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

mode_flags() {
  case $1 in
    random) ;;
    drawn) echo --coverage-guided --no-concolic ;;
    concolic) echo --coverage-guided ;;
  esac
}

# coverage_table SPEC LAUNCH "GRID": the table of median branches per N and
# mode, and the requests to 95 % of the branches reached.
coverage_table() {
  local spec=$1 launch=$2 grid=$3 mode n s total
  for mode in $MODES; do
    for n in $grid; do
      for s in $(seq 1 "$SEEDS"); do
        # shellcheck disable=SC2046
        echo "$mode $n $s $(build/dualswarm test --spec "$spec" --launch "$launch" --steps "$n" --seed "$s" --no-shrink \
          --json $(mode_flags "$mode") 2>/dev/null |
          python3 -c 'import json,sys; d=json.load(sys.stdin); print(",".join(map(str, d["coverage"]["branches"])))')"
      done
    done
  done >"$tmp/runs"
  read -r total < <(build/dualswarm test --spec "$spec" --launch "$launch" --steps 1 --no-shrink --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["coverage"]["total"])')
  python3 - "$tmp/runs" "$grid" "$SEEDS" "$total" "$MODES" <<'PY'
import statistics, sys
path, grid, seeds, total = sys.argv[1], [int(x) for x in sys.argv[2].split()], int(sys.argv[3]), int(sys.argv[4])
modes = sys.argv[5].split()
runs = {}
reached = set()
for line in open(path):
    parts = line.split()
    mode, n, s = parts[0], int(parts[1]), int(parts[2])
    ids = set(int(x) for x in parts[3].split(",")) if len(parts) > 3 and parts[3] else set()
    runs[(mode, n, s)] = ids
    reached |= ids
goal = 0.95 * len(reached)
print("| requests | " + " | ".join(f"{m}: median branches" for m in modes) + " |")
print("|---|" + "---|" * len(modes))
for n in grid:
    med = lambda m: statistics.median(len(runs[(m, n, s)]) for s in range(1, seeds + 1))
    print(f"| {n} | " + " | ".join(f"{med(m):g}" for m in modes) + " |")
def to_goal(mode):
    firsts = []
    for s in range(1, seeds + 1):
        hit = [n for n in grid if len(runs[(mode, n, s)]) >= goal]
        firsts.append(hit[0] if hit else float("inf"))
    return statistics.median(firsts), sum(1 for f in firsts if f != float("inf"))
print()
print(f"Branches: {total} in the spec, {len(reached)} reached by some run (the reachable ones, as far as measured); 95 % of them: {goal:.1f}.")
print(f"Requests to reach 95 % (median over {seeds} seeds, smallest N of the grid; seeds that got there within {grid[-1]}): "
      + ", ".join(f"{m} {to_goal(m)[0]:g} ({to_goal(m)[1]}/{seeds})" for m in modes) + ".")
PY
}

# mutant_rows SPEC LAUNCH "MUTANTS": requests to each mutant's finding.
mutant_rows() {
  local spec=$1 launch=$2 m mode lines found reqs
  for m in $3; do
    for mode in $MODES; do
      # shellcheck disable=SC2046
      lines=$(for s in $(seq 1 "$SEEDS"); do
        build/dualswarm test --spec "$spec" --launch "$launch --mutant $m" --steps 2000 --seed "$s" \
          --no-shrink $(mode_flags "$mode") 2>&1 | bench_last_line || true
      done)
      found=$(echo "$lines" | grep -c "safety after" || true)
      reqs=$(echo "$lines" | sed -n 's/.*safety after \([0-9]*\) requests.*/\1/p')
      echo "| $m | $mode | $found/$SEEDS | $(echo "$reqs" | bench_median) |"
    done
  done
}

webdav_launch="build/tests/suts/ds-ref-webdav --port {port} --dir {dir}"
ledger_launch="python3 bench/suts/ledger_server.py --port {port}"
webdav_table=$(coverage_table specs/http_webdav.dspec "$webdav_launch" "10 25 50 100 200 400")
webdav_mutants=$(mutant_rows specs/http_webdav.dspec "$webdav_launch" "2 3 14 15")
ledger_table=$(coverage_table bench/specs/ledger.dspec "$ledger_launch" "5 10 25 50 100")
ledger_mutants=$(mutant_rows bench/specs/ledger.dspec "$ledger_launch" "1")

section=$(cat <<MD
## Coverage-guided generation

Command: \`bash bench/run_coverage_guided_bench.sh $SEEDS\` (\`build/dualswarm test --spec SPEC --launch LAUNCH --steps N --seed S --no-shrink --json [--coverage-guided [--no-concolic]]\`)

* Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); $machine
* Spec coverage (docs/coverage.md) of runs of N requests at 4 connections, seeds 1-$SEEDS. *random*: one draw per request (the baseline: the same binary without the flag); *drawn*: the best of 8 drawn candidates (\`--coverage-guided --no-concolic\`); *concolic*: the 8 drawn and one whose random_int/random_word values Z3 solved for (\`--coverage-guided\`).

### WebDAV (specs/http_webdav.dspec, reference server)

$webdav_table

Reference-server mutants (tests/suts/MUTANTS.md), seeds 1-$SEEDS, up to 2,000 requests:

| mutant | generation | found | median requests to the finding |
|---|---|---|---|
$webdav_mutants

### Ledger (bench/specs/ledger.dspec, bench/suts/ledger_server.py): branches behind rare values

$ledger_table

Mutant 1 (an amount of 0 accepted), seeds 1-$SEEDS, up to 2,000 requests:

| mutant | generation | found | median requests to the finding |
|---|---|---|---|
$ledger_mutants
MD
)
echo "$section"
bench_replace_section "Coverage-guided generation" "$section"
