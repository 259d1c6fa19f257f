#!/usr/bin/env bash
# The resp adapter's numbers for bench/RESULTS.md, through the CLI as a user
# runs it (build/dualswarm, build/tests/suts/ds-ref-resp, Debian's
# redis-server): throughput against redis-server at 4 connections with 4 and
# 16 requests in flight (SEEDS seeds x STEPS requests, median), and for each
# ds-ref-resp mutant the requests and tester seconds to the finding over 20
# seeds (--no-shrink). Prints a Markdown section.
# Usage: bash bench/run_resp_bench.sh   (SEEDS=5 STEPS=20000 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-5}
STEPS=${STEPS:-20000}
CLI=build/dualswarm
REDIS="/usr/bin/redis-server --save '' --appendonly no --port {port} --bind 127.0.0.1"

echo "## resp adapter"
echo
echo "Command: \`bash bench/run_resp_bench.sh\` (SEEDS=$SEEDS, STEPS=$STEPS; build/ is $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' build/CMakeCache.txt))"
echo
echo "* Date: $(date -u '+%Y-%m-%d %H:%M:%S') UTC; machine: nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD); $(/usr/bin/redis-server --version | cut -d' ' -f1-3)"
echo
echo "### Throughput against redis-server (specs/redis.dspec, 4 connections, $STEPS requests, median of $SEEDS seeds)"
echo
echo "| requests in flight | requests/s (sent, answered and checked) |"
echo "|---:|---:|"
for inflight in 4 16; do
  rates=$(for s in $(seq 1 "$SEEDS"); do
    $CLI test --spec specs/redis.dspec --launch "$REDIS" --steps "$STEPS" --connections 4 --max-in-flight "$inflight" \
      --seed "$s" 2>&1 | bench_last_line | sed -n 's/.*, \([0-9]*\) requests\/s).*/\1/p'
  done)
  echo "| $inflight | $(echo "$rates" | bench_median) |"
done
echo
echo "### ds-ref-resp mutants (20 seeds each, 4 connections, up to 2000 requests, --no-shrink)"
echo
echo "| mutant | found | median requests | max requests | median tester s | max tester s |"
echo "|---:|---:|---:|---:|---:|---:|"
bench_mutant_rows specs/redis.dspec ds-ref-resp 1 2 3 4
