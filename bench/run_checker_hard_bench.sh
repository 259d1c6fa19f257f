#!/usr/bin/env bash
# Checker benchmark on hard histories (bench/checker_hard_bench.cc: register
# histories with crashed clients, 50-client kv, pending puts, queue):
# decisions/s and time per history, for the working tree AND a baseline
# commit, built and measured in the same run on the same machine. Replaces
# the "## Checker on hard histories" section of bench/RESULTS.md.
#
#   bash bench/run_checker_hard_bench.sh [checker_hard_bench flags...]
#
# The baseline commit (BASELINE_REF, default 92c41b0: main before the
# checker rewrite; BASELINE_REF=none skips it) is checked out in a
# temporary git worktree; the new benchmark and the harness it needs
# (engine/harness/simulator.*, random_server.*, workloads.*, bench/CMakeLists.txt and
# bench/checker_hard_bench.cc) are copied over it and compiled against the
# baseline's engine/check (the checker API is the same). engine/lang is
# copied too when it differs (specs/queue.dspec uses the `drop` builtin,
# which the baseline's interpreter lacks), unless the baseline does not
# build with it; the section says which. Both runs read the specs of the
# working tree (--spec-dir). Flags go to both runs (--classes=,
# --scale=, --history-timeout=, --class-timeout=, --max-steps=, --seed=).
#
# Environment: BASELINE_REF, BENCH_BUILD_DIR (default build-bench),
# BENCH_JOBS (ninja -j, default 1: the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
BASELINE_REF=${BASELINE_REF:-92c41b0}
export BENCH_JOBS=${BENCH_JOBS:-1}
BENCH_OVERLAY="bench/CMakeLists.txt bench/checker_hard_bench.cc engine/harness/simulator.h
  engine/harness/simulator.cc engine/harness/random_server.h engine/harness/random_server.cc
  engine/harness/workloads.h engine/harness/workloads.cc util/huge_pages.h"

tmp=$(mktemp -d /tmp/ds-hard-bench-XXXXXX)
wt=""
cleanup() {
  [ -n "$wt" ] && git worktree remove --force "$wt" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "== building checker_hard_bench (working tree) in $BENCH_BUILD_DIR" >&2
bench_build checker_hard_bench
machine=$(bench_machine engine bench/checker_hard_bench.cc)
head=$(git rev-parse --short HEAD)
check_state=$(git diff --stat HEAD -- engine/check | tail -n1)
untracked=$(git ls-files --others --exclude-standard engine/check | wc -l)
checker_hash=$(cat engine/check/*.cc engine/check/*.h | sha256sum | cut -c1-12)
base_bin=""
if [ "$BASELINE_REF" != none ]; then
  ref=$(git rev-parse --short "$BASELINE_REF")
  wt="$tmp/baseline"
  echo "== building checker_hard_bench against $ref's engine/check in $wt" >&2
  lang_note="engine/lang as of $ref"
  if ! git diff --quiet "$ref" -- engine/lang; then
    if BENCH_OVERLAY="$BENCH_OVERLAY engine/lang" bench_build_baseline "$ref" "$wt" checker_hard_bench; then
      lang_note="engine/lang copied from the working tree (the specs need its builtins)"
    else
      echo "== the baseline does not build with the working tree's engine/lang; building it with its own" >&2
      git worktree remove --force "$wt"
      bench_build_baseline "$ref" "$wt" checker_hard_bench
      lang_note="engine/lang as of $ref (the working tree's did not build with its engine/check; specs that need newer builtins do not load)"
    fi
  else
    bench_build_baseline "$ref" "$wt" checker_hard_bench
  fi
  base_bin="$wt/build-bench/bench/checker_hard_bench"
fi

run() {  # run NAME BINARY: runs it, keeps stdout in $tmp/NAME.md and the numbers in $tmp/NAME.tsv
  local name=$1 bin=$2 status=0
  bench_wait_quiet
  echo "$(cut -d' ' -f1-3 /proc/loadavg)" >"$tmp/$name.load"
  echo "== running $name: $bin --spec-dir=$PWD/specs ${*:3}" >&2
  local start=$(date +%s)
  "$bin" --spec-dir="$PWD/specs" --tsv="$tmp/$name.tsv" "${@:3}" >"$tmp/$name.md" || status=$?
  echo "$(( $(date +%s) - start )) s, exit status $status" >"$tmp/$name.info"
}
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
start=$(date +%s)
[ -n "$base_bin" ] && run baseline "$base_bin" "$@"
run current "$BENCH_BUILD_DIR/bench/checker_hard_bench" "$@"
secs=$(( $(date +%s) - start ))

comparison=""
if [ -n "$base_bin" ]; then
  comparison=$(python3 - "$tmp/baseline.tsv" "$tmp/current.tsv" <<'PY'
import csv, sys
def load(p):
    with open(p) as f:
        return {r["class"]: r for r in csv.DictReader(f, delimiter="\t")}
base, cur = load(sys.argv[1]), load(sys.argv[2])
def ms(r, key):
    if r is None or r["error"]: return "–"
    if key == "max_observe_ms" and r.get("online") == "0": return "–"
    v = float(r[key])
    s = f"{v:.2f}" if v < 10 else f"{v:.1f}" if v < 1000 else f"{v:.0f}"
    return ("≥ " + s) if key == "max_ms" and r["max_is_bound"] == "1" else s
def num(r, key, fmt="{:.0f}"):
    if r is None or r["error"]: return "–"
    v = float(r[key])
    if v >= 1e6: return f"{v/1e6:.2f}M"
    return f"{v/1000:.1f}k" if v >= 10000 else fmt.format(v)
def decided(r):
    if r is None: return "–"
    if r["error"]: return "not run"
    undecided = int(r["inconclusive"]) + int(r["timeout"]) + int(r["crashed"]) + int(r["not_run"])
    s = f'{r["decided"]}/{r["histories"]}'
    if undecided:
        parts = [f'{r[k]} {k.replace("_", " ")}' for k in ("inconclusive", "timeout", "crashed", "not_run") if r[k] != "0"]
        s += " (" + ", ".join(parts) + ")"
    if r["wrong"] != "0": s += f' **{r["wrong"]} WRONG**'
    return s
print("| class | baseline: decided | now: decided | baseline: median / max ms | now: median / max ms | baseline: decisions/s | now: decisions/s | baseline: obs/s, slowest Observe ms | now: obs/s, slowest Observe ms |")
print("|---|---|---|--:|--:|--:|--:|--:|--:|")
for name in cur:
    b, c = base.get(name), cur[name]
    print(f"| {name} | {decided(b)} | {decided(c)} | {ms(b,'median_ms')} / {ms(b,'max_ms')} | {ms(c,'median_ms')} / {ms(c,'max_ms')} "
          f"| {num(b,'decisions_per_s','{:.1f}')} | {num(c,'decisions_per_s','{:.1f}')} "
          f"| {num(b,'obs_per_s')}, {ms(b,'max_observe_ms')} | {num(c,'obs_per_s')}, {ms(c,'max_observe_ms')} |")
PY
)
fi

flags="${*:+ $*}"
section="## Checker on hard histories

Command: \`${BASELINE_REF:+BASELINE_REF=$BASELINE_REF }bash bench/run_checker_hard_bench.sh$flags\` (runs \`$BENCH_BUILD_DIR/bench/checker_hard_bench --spec-dir=\$PWD/specs$flags\` for the working tree and the same program built against the baseline's engine/check, Release builds)

* Date: $date; $machine
* Checker measured as \"now\": the working tree's engine/check when the run started (HEAD $head; \`git diff --stat HEAD -- engine/check\`: ${check_state:-no changes}; $untracked untracked files; sha256 of engine/check/*.{cc,h}: $checker_hash)
* Baseline: ${ref:-none} (its engine/check, with this benchmark and engine/harness/{simulator,workloads} copied in; ${lang_note:-}); run first, $(cat "$tmp/baseline.info" 2>/dev/null || echo 'not run'), load average before: $(cat "$tmp/baseline.load" 2>/dev/null || echo '–')
* Now: $(cat "$tmp/current.info"), load average before: $(cat "$tmp/current.load"); wall time of both runs: ${secs} s (the 2 cores are shared with other jobs)
* Classes (engine/harness/workloads.h; generation is not timed): *register*: specs/kv.dspec on one key, read/write/cas, values \"0\"..\"4\", Jepsen-etcd style: 5 or 10 clients, one operation in flight each, 5-20 % of the operations never answered (the client times out, closes its connection and carries on on a new one; the simulated server applied the operation before the crash, after it, or never); *kv*: specs/kv.dspec, 50 clients, 10 keys, 1,700 get/put/append/cas (*-crash*: 5 % never answered); *pending-N*: N concurrent puts of distinct values on N connections, never answered and closed, then a get of a value nobody wrote (2N+2 lines); *queue*: specs/queue.dspec, 10,000 enq (unique values) / deq on 4, 8, 16 connections. *-bad*: the same histories (same seeds) with one answered read changed to a value no request carries (harness::InjectUnwrittenRead), so no execution explains it; they must be rejected, the others accepted.
* Per history: CheckerOptions::max_steps 5,000,000 (per partition). *offline* classes (register, kv, pending) are checked whole with \`check::CheckTrace\` (what \`dualswarm check\` does: the baseline feeds the observations one by one, the new checker may hold the whole trace and explain it at once); *online* classes (queue) are fed one observation at a time with \`Checker::Observe\` (what the online tester does), each call timed (\"slowest Observe\"). A history is stopped (timeout) after 10 s, or when its class has used 60 s (the rest of the class: not run): online it is no longer fed, and a watchdog kills the checking process when one Observe overruns that by 2 s; offline the watchdog kills it at the limit. A process that dies (e.g. out of memory at 6 GiB) marks its history crashed. \"≥\": some history was not decided, so the max is a lower bound. decisions/s = decided histories / checker time of all histories run. wrong = an ok history rejected, a bad one accepted, a malformed trace or a spec error.

${comparison:+### Baseline vs now

$comparison
}
### Now (working tree)

$(cat "$tmp/current.md")
"
if [ -n "$base_bin" ]; then
  section+="
### Baseline ($ref)

$(cat "$tmp/baseline.md")
"
fi
bench_replace_section "Checker on hard histories" "$section"
echo "$section"
