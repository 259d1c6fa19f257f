#!/usr/bin/env bash
# The memcached adapter's numbers for bench/RESULTS.md, through the CLI as a
# user runs it (build/dualswarm, Debian's memcached): throughput at 4
# connections with 4 and 16 requests in flight, with all commands and with a
# random feature mask per seed (--swarm; masks that switch off `gets` keep
# cas uniques symbolic), SEEDS seeds x STEPS requests, median and slowest.
# For each ds-ref-memcached mutant: the requests and tester seconds to the
# finding over 20 seeds (--no-shrink). Under kills (the nemesis): 20 seeds
# with the shipped spec and with it less its `on fault`. Prints a Markdown
# section.
# Usage: bash bench/run_memcached_bench.sh   (SEEDS=5 STEPS=20000 KILL_STEPS=20000 by default)
#        KILLS_ONLY=1 bash bench/run_memcached_bench.sh   (only the table under kills)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-5}
STEPS=${STEPS:-20000}
CLI=build/dualswarm
MEMCACHED="/usr/bin/memcached -l 127.0.0.1 -p {port} -U 0 -u root -m 64"

# kills: memcached killed -9 and restarted by the nemesis (a one-node
# cluster), KILL_STEPS requests per seed, 20 seeds, with the shipped spec
# (its `on fault`: a killed memcached comes back empty) and with the same
# spec without the handler (memcached as a durable store: must be found).
kills() {
  local durable
  durable=$(mktemp --suffix=.dspec)
  awk '/^on fault f \{/{skip=1} !skip{print} skip&&/^\}/{skip=0}' specs/memcached.dspec >"$durable"
  for spec in specs/memcached.dspec "$durable"; do
    label="shipped spec (on fault: a kill empties it)"
    [ "$spec" = "$durable" ] && label="the spec without on fault (durable)"
    for s in $(seq 1 20); do
      $CLI test --spec "$spec" --launch "$MEMCACHED" --nodes 1 --nemesis kill --fault-interval 100 \
        --fault-duration 50 --steps "${KILL_STEPS:-20000}" --seed "$s" --no-shrink --json --quiet 2>/dev/null | tail -1 || true
    done | python3 bench/json_row.py runs "$label"
  done
  rm -f "$durable"
}
if [ -n "${KILLS_ONLY:-}" ]; then
  echo "| spec | runs | outcomes | findings | tester s (median / max) | faults injected (median / max) |"
  echo "|---|--:|---|--:|--:|--:|"
  kills
  exit 0
fi

echo "## memcached adapter"
echo
echo "Command: \`bash bench/run_memcached_bench.sh\` (SEEDS=$SEEDS, STEPS=$STEPS; build/ is $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' build/CMakeCache.txt))"
echo
echo "* Date: $(date -u '+%Y-%m-%d %H:%M:%S') UTC; machine: nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD); $(/usr/bin/memcached -V)"
echo
echo "### Throughput against memcached (specs/memcached.dspec, 4 connections, $STEPS requests, $SEEDS seeds)"
echo
echo "| requests in flight | feature mask | passed | median requests/s (sent, answered and checked) | slowest requests/s |"
echo "|---:|---|---:|---:|---:|"
for inflight in 4 16; do
  for mask in none swarm; do
    lines=$(for s in $(seq 1 "$SEEDS"); do
      extra=""
      [ "$mask" = swarm ] && extra="--swarm"
      $CLI test --spec specs/memcached.dspec --launch "$MEMCACHED" --steps "$STEPS" --connections 4 \
        --max-in-flight "$inflight" --seed "$s" --no-shrink $extra 2>&1 | bench_last_line || true
    done)
    echo "| $inflight | $mask | $(echo "$lines" | bench_throughput_cells "$SEEDS") |"
  done
done
echo
echo "### ds-ref-memcached mutants (20 seeds each, 4 connections, up to 2000 requests, --no-shrink)"
echo
echo "| mutant | found | median requests | max requests | median tester s | max tester s |"
echo "|---:|---:|---:|---:|---:|---:|"
bench_mutant_rows specs/memcached.dspec ds-ref-memcached 1 2 3 4
echo
echo "### Under kills (--nodes 1 --nemesis kill --fault-interval 100 --fault-duration 50, ${KILL_STEPS:-20000} requests, seeds 1-20)"
echo
echo "| spec | runs | outcomes | findings | tester s (median / max) | faults injected (median / max) |"
echo "|---|--:|---|--:|--:|--:|"
kills
