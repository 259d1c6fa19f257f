#!/usr/bin/env bash
# Online tester benchmark: time to find each mutant of the reference
# servers (median/max over SEEDS seeds) and tester throughput against the
# correct servers. Replaces the "## Online tester" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-20}
bench_build online_bench ds-ref-webdav ds-ref-kv
machine=$(bench_machine)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
start=$(date +%s)
out=$(build-bench/bench/online_bench "$PWD" "$PWD/build-bench/tests/suts/ds-ref-webdav" \
      "$PWD/build-bench/tests/suts/ds-ref-kv" "$SEEDS")
secs=$(( $(date +%s) - start ))
section="## Online tester

Command: \`bash bench/run_online_bench.sh\` (SEEDS=$SEEDS; runs \`build-bench/bench/online_bench\`, Release build)

* Date: $date; $machine
* One tester, 4 connections, 4 requests in flight, response timeout 250 ms (liveness findings take at least that long), up to 30 s per seed.
  \"median s / max s\": wall time from launching the SUT to the finding, over the seeds that found it.
* Wall time of the whole benchmark: ${secs} s
$out"
bench_replace_section "Online tester" "$section"
echo "$section"
