#!/usr/bin/env bash
# Online tester benchmark: time to find each mutant of the reference
# servers (median/max over SEEDS seeds) and tester throughput against the
# correct servers. Replaces the "## Online tester" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-20}
bash scripts/setup.sh >/dev/null
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build-bench -G Ninja -DDUALSWARM_BENCH=ON -DDUALSWARM_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build-bench online_bench ds-ref-webdav ds-ref-kv >/dev/null
start=$(date +%s)
out=$(build-bench/bench/online_bench "$PWD" "$PWD/build-bench/tests/suts/ds-ref-webdav" \
      "$PWD/build-bench/tests/suts/ds-ref-kv" "$SEEDS")
secs=$(( $(date +%s) - start ))
section=$(cat <<SECTION
## Online tester

Command: \`bash bench/run_online_bench.sh\` (SEEDS=$SEEDS; runs \`build-bench/bench/online_bench\`, Release build)

* Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); commit $(git rev-parse --short HEAD)
* One tester, 4 connections, 4 requests in flight, response timeout 250 ms (liveness findings take at least that long), up to 30 s per seed.
  "median s / max s": wall time from launching the SUT to the finding, over the seeds that found it.
* Wall time of the whole benchmark: ${secs} s
$out
SECTION
)
python3 - "$section" <<'PY' 2>/dev/null || { echo "$section" >> bench/RESULTS.md; }
import sys, re
section = sys.argv[1].rstrip() + "\n"
path = "bench/RESULTS.md"
text = open(path).read()
pattern = re.compile(r"^## Online tester\n.*?(?=^## |\Z)", re.S | re.M)
text = pattern.sub(section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
open(path, "w").write(text)
PY
echo "$section"
