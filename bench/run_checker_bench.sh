#!/usr/bin/env bash
# Builds and runs the checker throughput benchmark (bench/checker_bench.cc)
# in its own Release build directory and records the table in
# bench/RESULTS.md under "## Checker throughput" (other sections are kept).
#
#   bash bench/run_checker_bench.sh [checker_bench flags...]
#
# Environment: BUILD_DIR (default build-bench), JOBS (ninja -j, default 2).
# Flags are passed to checker_bench (--runs=N --deadline=S --conns=1,4,16
# --sizes=1000,10000,100000 --kinds=concrete,symbolic --seed=N --keys=K).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build-bench}
JOBS=${JOBS:-2}
RESULTS=bench/RESULTS.md

echo "== configuring $BUILD_DIR (Release, DUALSWARM_BENCH=ON)" >&2
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DDUALSWARM_BENCH=ON -DDUALSWARM_TESTS=OFF >/dev/null
echo "== building checker_bench" >&2
ninja -C "$BUILD_DIR" -j "$JOBS" checker_bench >&2

cmd="bash bench/run_checker_bench.sh${*:+ $*}"
echo "== running: $BUILD_DIR/bench/checker_bench $*" >&2
out=$(mktemp)
trap 'rm -f "$out" "$out.section" "$out.new"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
status=0
"$BUILD_DIR/bench/checker_bench" "$@" >"$out" || status=$?
elapsed=$(( $(date +%s) - start ))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^model name[[:space:]]*:[[:space:]]*//' || true)
compiler=$(c++ --version 2>/dev/null | head -n1 || true)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null || true)" ]; then commit="$commit (with uncommitted changes)"; fi
table=$(grep '^|' "$out" || true)
target=$(grep '^TARGET' "$out" | sed 's/^TARGET /Target /' || true)

{
  echo "## Checker throughput"
  echo
  echo "Command: \`$cmd\` (runs \`$BUILD_DIR/bench/checker_bench${*:+ $*}\`, Release build)"
  echo
  echo "* Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "* Machine: nproc $(nproc), CPU ${cpu:-unknown}, load average before / after the run: $load_before / $load_after (the cores are shared with other jobs)"
  echo "* Build: ${compiler:-unknown compiler}, CMAKE_BUILD_TYPE=Release, commit $commit"
  echo "* Wall time of the whole benchmark: ${elapsed} s; checker_bench exit status: $status"
  echo
  cat <<'TEXT'
Traces come from `harness::Simulate` (the spec runs as the server behind a random network:
per-connection FIFO, arbitrary delays across connections; one request in flight per
connection; seed 1; no truncation). Generation is not timed. "observations" counts sent +
received events (requests = observations / 2). Times are medians of 3 timed
`check::CheckTrace` runs (tcp network model, default options), wall clock and process CPU
time (the CPU figure is steadier when other jobs share the cores). Each row first gets a guard
run (the same Create + Observe loop as CheckTrace); "(1 run)" marks rows whose guard run took
over 10 s, which is then their only measurement. The other columns come from the guard run,
which also enforces a 60 s deadline (SLOW rows) and checks the verdict. A larger row is not run when the smaller row of the same
kind and connection count, scaled linearly, would already exceed 60 s.

* *concrete*: `specs/kv.dspec`; get/put/append/cas, uniform over the keys; no value is symbolic.
* *symbolic*: `bench/kv_versioned.dspec`; get/put/cas_version, uniform over the keys. Every
  write stores a server-chosen `fresh string` version that its response does not reveal
  (the simulated server picks from {v1, v2, v3}; clients guess from {v1, v2, v3, v9}), so the
  checker keeps versions symbolic until a get reveals them (binding) and forks on
  cas_version (solver).
* Keys (`keys` column): 3 for 1 and 4 connections, 10 for 16 connections.
TEXT
  echo
  echo "$table"
  echo
  if [ -n "$target" ]; then
    echo "$target"
  else
    echo "Target (>= 200k obs/s, concrete kv, 4 connections): not measured in this run"
  fi
  echo
} >"$out.section"

# Replace only the "## Checker throughput" section (up to the next "## ").
if [ -f "$RESULTS" ]; then
  awk -v secfile="$out.section" '
    BEGIN { skipping = 0; done = 0 }
    /^## / {
      if ($0 == "## Checker throughput") {
        while ((getline line < secfile) > 0) print line
        skipping = 1; done = 1; next
      }
      skipping = 0
    }
    !skipping { print }
    END {
      if (!done) {
        print ""
        while ((getline line < secfile) > 0) print line
      }
    }' "$RESULTS" >"$out.new"
  mv "$out.new" "$RESULTS"
else
  { echo "# Benchmark results"; echo; cat "$out.section"; } >"$RESULTS"
fi

cat "$out"
echo "== wrote $RESULTS (${elapsed} s)" >&2
exit "$status"
