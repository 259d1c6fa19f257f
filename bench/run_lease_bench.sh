#!/usr/bin/env bash
# Coordinator lease benchmark: jobs/s and LeaseJobs/CompleteJob latency with
# 1, 4 and 16 worker client processes over real gRPC against
# dualswarm-coordinator on its embedded PostgreSQL (bench/lease_bench.cc).
# Replaces the "## Coordinator leases" section of bench/RESULTS.md.
#
#   bash bench/run_lease_bench.sh
#   BASELINE_REF=76cbd2e bash bench/run_lease_bench.sh   # also measure an older commit
#   (BASELINE_NOTE says what that commit is, for the text)
#
# Knobs: SECS (per measurement, default 8), JOBS (per run, 30000), REPS
# (measurements per row, median shown; 3), CLIENTS (1,4,16), MAX_JOBS (1,8),
# BASELINE_REF (a commit whose coordinator is built in a temporary git
# worktree and measured in the same run, one measurement per row),
# BASELINE_MAX_JOBS (its max_jobs values, default 1), BENCH_BUILD_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS=${SECS:-8}
JOBS=${JOBS:-30000}
REPS=${REPS:-3}
CLIENTS=${CLIENTS:-1,4,16}
MAX_JOBS=${MAX_JOBS:-1,8}
BASELINE_MAX_JOBS=${BASELINE_MAX_JOBS:-1}
bench_build lease_bench dualswarm-coordinator
machine=$(bench_machine services proto bench/lease_bench.cc bench/run_lease_bench.sh bench/lib.sh)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
bench=$BENCH_BUILD_DIR/bench/lease_bench

baseline=""
if [ -n "${BASELINE_REF:-}" ]; then
  ref=$(git rev-parse --short "$BASELINE_REF")
  wt=$(mktemp -d /tmp/ds-lease-baseline-XXXXXX)
  git worktree add --detach "$wt" "$ref" >/dev/null 2>&1
  (cd "$wt" && export CCACHE_BASEDIR="$wt" CCACHE_NOHASHDIR=true &&
   cmake -S . -B build -G Ninja -DDUALSWARM_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null &&
   ninja -C build ${BENCH_JOBS:+-j "$BENCH_JOBS"} dualswarm-coordinator >/dev/null)
  bench_wait_quiet
  base_load=$(cut -d' ' -f1-3 /proc/loadavg)
  base_out=$("$bench" --coordinator "$wt/build/services/dualswarm-coordinator" --clients "$CLIENTS" \
             --max-jobs "$BASELINE_MAX_JOBS" --seconds "$SECS" --jobs "$JOBS" --reps 1)
  git worktree remove --force "$wt"
  baseline="
Baseline: the coordinator of commit $ref (${BASELINE_NOTE:-an earlier commit}), same clients, max_jobs=$BASELINE_MAX_JOBS, one run per row (load average before: $base_load):

$base_out"
fi

bench_wait_quiet
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
out=$("$bench" --coordinator "$BENCH_BUILD_DIR/services/dualswarm-coordinator" --clients "$CLIENTS" \
      --max-jobs "$MAX_JOBS" --seconds "$SECS" --jobs "$JOBS" --reps "$REPS")
secs=$(( $(date +%s) - start ))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
section="## Coordinator leases

Command: \`${BASELINE_REF:+BASELINE_REF=$BASELINE_REF BASELINE_MAX_JOBS=$BASELINE_MAX_JOBS }bash bench/run_lease_bench.sh\` (SECS=$SECS JOBS=$JOBS REPS=$REPS; runs \`$bench\`, Release build)

* Date: $date; $machine
* Load average before / after: $load_before / $load_after (the 2 cores are shared with other jobs; the coordinator, its PostgreSQL and every client run on them)
* Each row: one run of $JOBS jobs (specs/kv.dspec, a jsonl target), N client processes (Register, then LeaseJobs(max_jobs, wait_ms=1000) -> CompleteJob(PASSED) for each job) for $SECS s after a common start; jobs/s = completions inside the window / $SECS s; latencies are per call as the client sees them (lease: calls that returned jobs). Median of $REPS measurements by jobs/s.
* Embedded PostgreSQL 15 with durable commits (fsync on); auth on (bearer tokens); coordinator defaults (lease pool hold \`--lease-prefetch-ms 50\`, services/coordinator/lease_pool.h); wall time of the whole benchmark ${secs} s.

$out
$baseline"
bench_replace_section "Coordinator leases" "$section"
echo "$section"
