#!/usr/bin/env bash
# Intermediaries benchmark: time to find each mutant of the reference relay,
# forward proxy and cache, the tester playing their clients and their origin
# (median/max over SEEDS seeds), and the tester's throughput against the
# correct ones. Replaces the "## Intermediaries" section of
# bench/RESULTS.md.
#
#   SEEDS=20 bash bench/run_intermediary_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-20}
bench_build online_bench ds-ref-relay ds-ref-proxy ds-ref-cache
machine=$(bench_machine)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
start=$(date +%s)
out=$(build-bench/bench/online_bench --intermediaries "$PWD" "$PWD/build-bench/tests/suts/ds-ref-relay" \
      "$PWD/build-bench/tests/suts/ds-ref-proxy" "$PWD/build-bench/tests/suts/ds-ref-cache" "$SEEDS")
secs=$(( $(date +%s) - start ))
section="## Intermediaries

Command: \`bash bench/run_intermediary_bench.sh\` (SEEDS=$SEEDS; runs \`build-bench/bench/online_bench --intermediaries\`, Release build)

* Date: $date; $machine
* The tester plays the clients and the origin (\`--origins 1\`; the SUT keeps at most 2 origin connections).
  One tester, 4 client connections, 4 requests in flight, response timeout 250 ms, up to 30 s per seed.
  \"median s / max s\": wall time from launching the SUT to the finding, over the seeds that found it.
* Wall time of the whole benchmark: ${secs} s
$out"
bench_replace_section "Intermediaries" "$section"
echo "$section"
