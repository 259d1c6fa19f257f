#!/usr/bin/env bash
# The grpc adapter's numbers for bench/RESULTS.md, through the CLI as a user
# runs it (build/dualswarm, specs/etcd_kv.dspec with the descriptor set of
# specs/etcd_kv.proto): throughput at 4 connections against Debian's etcd
# (one node, fsync on every write, as etcd always does) and against
# ds-ref-etcd, with all requests and with a random feature mask per seed
# (--swarm), SEEDS seeds x STEPS requests, median and slowest. For each
# ds-ref-etcd mutant: the requests and tester seconds to the finding over
# 20 seeds (--no-shrink). Prints a Markdown section.
# Usage: bash bench/run_etcd_bench.sh   (SEEDS=5 STEPS=5000 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-5}
STEPS=${STEPS:-5000}
CLI=build/dualswarm
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
ninja -C build dualswarm ds-ref-etcd etcd_kv_descriptor_set >/dev/null
DESCRIPTORS=build/etcd_kv.pb
ETCD="/usr/bin/etcd --name ds --data-dir {dir}/data --listen-client-urls http://127.0.0.1:{port} \
--advertise-client-urls http://127.0.0.1:{port} --listen-peer-urls http://127.0.0.1:{peer_port} \
--initial-advertise-peer-urls http://127.0.0.1:{peer_port} --initial-cluster ds=http://127.0.0.1:{peer_port} --log-level error --logger zap"
REF="build/tests/suts/ds-ref-etcd --port {port} --dir {dir} --mutant 0"

echo "## grpc adapter (etcd)"
echo
echo "Command: \`bash bench/run_etcd_bench.sh\` (SEEDS=$SEEDS, STEPS=$STEPS; build/ is $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' build/CMakeCache.txt))"
echo
echo "* Date: $(date -u '+%Y-%m-%d %H:%M:%S') UTC; machine: nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD); etcd $(/usr/bin/etcd --version | sed -n 's/^etcd Version: //p')"
echo
echo "### Throughput (specs/etcd_kv.dspec, 4 connections, one call in flight on each, $STEPS requests, $SEEDS seeds)"
echo
echo "| server | feature mask | passed | median requests/s (sent, answered and checked) | slowest requests/s |"
echo "|---|---|---:|---:|---:|"
for server in etcd ds-ref-etcd; do
  launch=$ETCD
  [ "$server" = ds-ref-etcd ] && launch=$REF
  for mask in none swarm; do
    lines=$(for s in $(seq 1 "$SEEDS"); do
      extra=""
      [ "$mask" = swarm ] && extra="--swarm"
      $CLI test --spec specs/etcd_kv.dspec --descriptor-set "$DESCRIPTORS" --launch "$launch" --steps "$STEPS" \
        --connections 4 --seed "$s" --no-shrink $extra 2>&1 | bench_last_line || true
    done)
    echo "| $server | $mask | $(echo "$lines" | bench_throughput_cells "$SEEDS") |"
  done
done
echo
echo "### ds-ref-etcd mutants (20 seeds each, 4 connections, up to 2000 requests, --no-shrink)"
echo
echo "| mutant | found | median requests | max requests | median tester s | max tester s |"
echo "|---:|---:|---:|---:|---:|---:|"
BENCH_TEST_ARGS="--descriptor-set $DESCRIPTORS" bench_mutant_rows specs/etcd_kv.dspec ds-ref-etcd 1 2 3 4 5
