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
