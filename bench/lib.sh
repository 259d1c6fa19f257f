# Shared by bench/run_*_bench.sh: build in build-bench (Release; another
# directory with BENCH_BUILD_DIR=...) and replace one "## Section" of
# bench/RESULTS.md. Source it from the repository root.

BENCH_BUILD_DIR=${BENCH_BUILD_DIR:-build-bench}
# BENCH_JOBS: ninja -j for the builds below and the scripts' baseline builds
# (default: ninja's own).

# bench_build TARGET...: configure $BENCH_BUILD_DIR and build the targets.
bench_build() {
  bash scripts/setup.sh >/dev/null
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  cmake -S . -B "$BENCH_BUILD_DIR" -G Ninja -DDUALSWARM_BENCH=ON -DDUALSWARM_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$BENCH_BUILD_DIR" ${BENCH_JOBS:+-j "$BENCH_JOBS"} "$@" >/dev/null
}

# bench_build_baseline REF DIR TARGET...: check out commit REF in a new git
# worktree DIR (remove it with `git worktree remove --force DIR`), copy the
# working tree's files named in BENCH_OVERLAY (space-separated paths, e.g.
# the benchmark program and the harness it needs) over it, and build the
# targets there (Release, DIR/build-bench). So a benchmark that is newer
# than REF can measure REF's engine: its own sources with the new bench.
bench_build_baseline() {
  local ref=$1 dir=$2 p
  shift 2
  git worktree add --detach "$dir" "$ref" >/dev/null 2>&1
  for p in ${BENCH_OVERLAY:-}; do
    if [ -d "$p" ]; then
      mkdir -p "$dir/$p"
      cp -R "$p/." "$dir/$p/"
    else
      mkdir -p "$dir/$(dirname "$p")"
      cp "$p" "$dir/$p"
    fi
  done
  (cd "$dir" && export CCACHE_BASEDIR="$dir" CCACHE_NOHASHDIR=true &&
   cmake -S . -B build-bench -G Ninja -DDUALSWARM_BENCH=ON -DDUALSWARM_TESTS=OFF \
     -DCMAKE_BUILD_TYPE=Release >/dev/null &&
   ninja -C build-bench ${BENCH_JOBS:+-j "$BENCH_JOBS"} "$@" >/dev/null)
}

# bench_machine [DIR...]: one line describing the machine and the commit
# measured; "with uncommitted changes" when DIRs (default: engine workers)
# differ from it.
bench_machine() {
  local dirs=("$@")
  [ ${#dirs[@]} -eq 0 ] && dirs=(engine workers)
  echo "machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- "${dirs[@]}" || echo ' (with uncommitted changes)')"
}

# bench_replace_section TITLE TEXT: replace (or append) "## TITLE" in bench/RESULTS.md.
bench_replace_section() {
  python3 - "$1" "$2" <<'PY'
import re, sys
title, section = sys.argv[1], sys.argv[2].rstrip() + "\n"
path = "bench/RESULTS.md"
text = open(path).read()
pattern = re.compile(r"^## " + re.escape(title) + r"\n.*?(?=^## |\Z)", re.S | re.M)
text = pattern.sub(lambda m: section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
open(path, "w").write(text)
PY
}

# bench_wait_quiet [MAX_SECONDS]: wait (default at most 120 s) until the
# 1-minute load average is below 1, so a build that just finished (ours or
# a baseline's) does not weigh on the first measurements.
bench_wait_quiet() {
  local max=${1:-120} waited=0
  while [ "$waited" -lt "$max" ] && awk '{exit !($1 >= 1.0)}' /proc/loadavg; do
    sleep 5
    waited=$((waited + 5))
  done
}

# The CLI benchmarks (run_resp_bench.sh, run_memcached_bench.sh) run
# build/dualswarm as a user does.
# bench_median: the median of the numbers on stdin ("-" for none).
bench_median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "-"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# bench_last_line: the verdict line of `dualswarm test` output on stdin.
bench_last_line() { tr '\r' '\n' | grep -E "PASSED|safety after|liveness after|INCONCLUSIVE|inconclusive" | tail -1; }
# bench_throughput_cells SEEDS < last lines of `dualswarm test` runs: the
# Markdown cells "passed/SEEDS | median requests/s | slowest requests/s".
bench_throughput_cells() {
  local lines passed rates
  lines=$(cat)
  passed=$(echo "$lines" | grep -c "PASSED" || true)
  rates=$(echo "$lines" | sed -n 's/.*, \([0-9]*\) requests\/s).*/\1/p')
  echo "$passed/$1 | $(echo "$rates" | bench_median) | $(echo "$rates" | sort -g | head -1)"
}

# bench_mutant_rows SPEC SERVER MUTANTS...: one Markdown row per mutant of
# reference server SERVER (tests/suts binary name): seeds 1-20 of up to 2000
# requests at 4 connections, --no-shrink; found, requests and tester seconds.
# BENCH_TEST_ARGS: more flags for `dualswarm test` (e.g. --descriptor-set F).
bench_mutant_rows() {
  local spec=$1 server=$2 m lines found reqs secs
  shift 2
  for m in "$@"; do
    lines=$(for s in $(seq 1 20); do
      build/dualswarm test --spec "$spec" --launch "build/tests/suts/$server --port {port} --dir {dir} --mutant $m" \
        --steps 2000 --seed "$s" --no-shrink ${BENCH_TEST_ARGS:-} 2>&1 | bench_last_line || true
    done)
    found=$(echo "$lines" | grep -c "safety after" || true)
    reqs=$(echo "$lines" | sed -n 's/.*safety after \([0-9]*\) requests.*/\1/p')
    secs=$(echo "$lines" | sed -n 's/.*safety after [0-9]* requests (seed [0-9]*, \([0-9.]*\) s).*/\1/p')
    echo "| $m | $found/20 | $(echo "$reqs" | bench_median) | $(echo "$reqs" | sort -g | tail -1) | $(echo "$secs" | bench_median) | $(echo "$secs" | sort -g | tail -1) |"
  done
}
