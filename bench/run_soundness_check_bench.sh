#!/usr/bin/env bash
# Many small checks: the soundness tests (tests/unit/checker_soundness_test.cc,
# Soundness.*) check thousands of short traces the specs produce themselves,
# as shrinking and the online tester's reruns do. Replaces the "## Many small
# checks" section of bench/RESULTS.md with the wall time of each test for
#
#  - engine: baseline BASELINE_REF (default e7641f3) or the working tree;
#  - spec: specs/http_webdav.dspec as of BASELINE_REF or of the working tree
#    (the kv and redis specs are the same in both),
#
# each of the four combinations RUNS times (default 3), in turn. Both
# engines are Release builds of checker_soundness_test in git worktrees
# (the working tree's engine/, specs/ and tests/ copied over HEAD).
# Environment: RUNS, BASELINE_REF, BENCH_JOBS (ninja -j, default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
RUNS=${RUNS:-3}
BASELINE_REF=${BASELINE_REF:-e7641f3}
export BENCH_JOBS=${BENCH_JOBS:-1}

tmp=$(mktemp -d /tmp/ds-soundness-bench-XXXXXX)
trees=()
cleanup() {
  for t in "${trees[@]}"; do git worktree remove --force "$t" >/dev/null 2>&1 || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# build_tree NAME REF [OVERLAY...]: a worktree of REF with the working
# tree's OVERLAY directories copied over it, checker_soundness_test built.
build_tree() {
  local name=$1 ref=$2 dir="$tmp/$1" p
  shift 2
  git worktree add --detach "$dir" "$ref" >/dev/null 2>&1
  trees+=("$dir")
  for p in "$@"; do cp -R "$p/." "$dir/$p/"; done
  echo "== building checker_soundness_test ($name: $ref${*:+ + the working tree: $*})" >&2
  (cd "$dir" && export CCACHE_BASEDIR="$dir" CCACHE_NOHASHDIR=true &&
   cmake -S . -B build-bench -G Ninja -DDUALSWARM_TESTS=ON -DCMAKE_BUILD_TYPE=Release >/dev/null &&
   ninja -C build-bench ${BENCH_JOBS:+-j "$BENCH_JOBS"} checker_soundness_test >/dev/null)
}

bash scripts/setup.sh >/dev/null
ref=$(git rev-parse --short "$BASELINE_REF")
build_tree baseline "$ref"
build_tree current HEAD engine specs tests
git show "$ref:specs/http_webdav.dspec" >"$tmp/spec-baseline.dspec"
cp specs/http_webdav.dspec "$tmp/spec-current.dspec"
machine=$(bench_machine engine specs tests)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# One table row from the test's output: seconds per test, their sum, the verdict.
cat >"$tmp/row.py" <<'PY'
import re, sys
ms, failed = {}, False
for line in sys.stdin:
    m = re.search(r"OK \] Soundness\.(\S+) \((\d+) ms", line)
    if m: ms[m.group(1)] = int(m.group(2))
    failed |= "FAILED" in line
cols = ["HttpSingleConnection", "HttpThreeConnections", "HttpPipelined", "KvFourConnections", "RedisOneServer", "RedisPrimaryAndReplicas"]
print(" | ".join("%.2f" % (ms.get(c, 0) / 1000) for c in cols), "| %.1f |" % (sum(ms.values()) / 1000), "FAILED" if failed else "passed")
PY

rows=""
for run in $(seq 1 "$RUNS"); do
  for spec in baseline current; do
    for engine in baseline current; do
      cp "$tmp/spec-$spec.dspec" "$tmp/$engine/specs/http_webdav.dspec"
      echo "== run $run: engine $engine, spec $spec" >&2
      row=$("$tmp/$engine/build-bench/tests/checker_soundness_test" --gtest_filter='Soundness.*' 2>&1 |
        python3 "$tmp/row.py")
      rows+="| $run | $engine | $spec | $row"$'\n'
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

section="## Many small checks

Command: \`bash bench/run_soundness_check_bench.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'); $machine; load average $load_before before, $load_after after).

Wall time (s) of the soundness tests (\`Soundness.*\`: each checks 200-1,500 traces of 40-80 requests that the spec produced itself, with four branch orders), Release builds. *engine*: $ref or the working tree; *spec*: \`specs/http_webdav.dspec\` as of $ref or of the working tree. The last column but one is the sum over all 12 Soundness tests.

| run | engine | webdav spec | Http 1 conn | Http 3 conns | Http pipelined | Kv 4 conns | Redis 1 server | Redis replicas | all | verdicts |
|--:|---|---|--:|--:|--:|--:|--:|--:|--:|---|
$rows"
bench_replace_section "Many small checks" "$section"
echo "$section"
