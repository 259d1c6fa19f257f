#!/usr/bin/env bash
# A real 3-node etcd cluster (Debian's etcd-server) under the nemesis,
# through the CLI as a user runs it: specs/etcd_kv.dspec over the grpc
# adapter, 6 round-robin connections, STEPS requests, SEEDS seeds per
# setting (no faults, pauses, kills, partitions), --no-shrink --json. A correct etcd
# must never be found wrong: every run passes, or ends INCONCLUSIVE at the
# checker's bound (--max-check-seconds), which is not a finding.
# Prints a Markdown section for bench/RESULTS.md.
# Usage: bash bench/run_etcd_cluster_fault_bench.sh   (SEEDS=20 STEPS=1000)
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-20}
STEPS=${STEPS:-1000}
CLI=build/dualswarm
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
ninja -C build dualswarm etcd_kv_descriptor_set >/dev/null
ETCD="/usr/bin/etcd --name n{node} --data-dir {dir}/data --listen-client-urls http://127.0.0.1:{port} \
--advertise-client-urls http://127.0.0.1:{port} --listen-peer-urls http://127.0.0.1:{peer_port} \
--initial-advertise-peer-urls http://127.0.0.1:{advertise_peer_port} --initial-cluster-state new \
--initial-cluster n0=http://127.0.0.1:{peer_port_0},n1=http://127.0.0.1:{peer_port_1},n2=http://127.0.0.1:{peer_port_2} \
--log-level error --logger zap"

# run NEMESIS-ARGS...: one JSON result line per seed.
run() {
  for s in $(seq 1 "$SEEDS"); do
    $CLI test --spec specs/etcd_kv.dspec --descriptor-set build/etcd_kv.pb --launch "$ETCD" --nodes 3 \
      --connections 6 --steps "$STEPS" --seed "$s" --no-shrink --json --quiet --max-check-seconds 10 "$@" \
      2>/dev/null | tail -1 || true
  done
}

# row LABEL: a table row from the JSON lines on stdin.
row() { python3 bench/json_row.py runs "$1"; }

# The link faults beyond a partition (bridge: the one link between two
# members cut; slow: a member's messages delayed 100 ms).
links() {
  run --nemesis bridge --fault-interval 500 --fault-duration 1500 | row "bridge (the link between two members cut for 1.5 s)"
  run --nemesis slow --fault-interval 500 --fault-duration 1500 | row "slow (a member's messages delayed 100 ms for 1.5 s)"
}
if [ -n "${LINKS_ONLY:-}" ]; then
  echo "| faults | runs | outcomes | findings | tester s (median / max) | faults injected (median / max) |"
  echo "|---|--:|---|--:|--:|--:|"
  links
  exit 0
fi

echo "## etcd cluster under faults"
echo
echo "Command: \`bash bench/run_etcd_cluster_fault_bench.sh\` (SEEDS=$SEEDS, STEPS=$STEPS)"
echo
echo "* Date: $(date -u '+%Y-%m-%d %H:%M:%S') UTC; machine: nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD); etcd $(/usr/bin/etcd --version | sed -n 's/^etcd Version: //p')"
echo "* Every run: \`dualswarm test --spec specs/etcd_kv.dspec --nodes 3 --connections 6 --steps $STEPS --no-shrink --json --max-check-seconds 10\` against 3 etcd members (round-robin), seeds 1..$SEEDS. A finding here would be a false alarm (or an etcd bug to explain in docs/real-servers.md); inconclusive is the checker's bound, not a verdict."
echo
echo "| faults | runs | outcomes | findings | tester s (median / max) | faults injected (median / max) |"
echo "|---|--:|---|--:|--:|--:|"
run | row "none"
run --nemesis pause --fault-interval 500 --fault-duration 1500 | row "pause (1.5 s, the leader too)"
run --nemesis kill --fault-interval 300 --fault-duration 500 | row "kill -9 and restart (0.5 s down)"
run --nemesis pause,kill --fault-interval 300 --fault-duration 500 --swarm | row "pause,kill, --swarm (each seed a subset)"
run --nemesis partition --fault-interval 500 --fault-duration 1500 | row "partition (a member cut off for 1.5 s)"
run --nemesis pause,kill,partition --fault-interval 300 --fault-duration 500 | row "pause,kill,partition"
links
