#!/usr/bin/env bash
# Shrinking benchmark: per mutant of the reference servers, messages before
# and after shrinking, reruns and shrink time (medians over SEEDS seeds).
# Replaces the "## Shrinking" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${SEEDS:-10}
bash scripts/setup.sh >/dev/null
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
cmake -S . -B build-bench -G Ninja -DDUALSWARM_BENCH=ON -DDUALSWARM_TESTS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build-bench shrink_bench ds-ref-webdav ds-ref-kv >/dev/null
start=$(date +%s)
out=$(build-bench/bench/shrink_bench "$PWD" "$PWD/build-bench/tests/suts/ds-ref-webdav" \
      "$PWD/build-bench/tests/suts/ds-ref-kv" "$SEEDS")
secs=$(( $(date +%s) - start ))
section=$(cat <<SECTION
## Shrinking

Command: \`bash bench/run_shrink_bench.sh\` (SEEDS=$SEEDS; runs \`build-bench/bench/shrink_bench\`, Release build)

* Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); machine: nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); commit $(git rev-parse --short HEAD)
* Each mutant: the first failing seed from SEED*1000 on (steps 1000, 4 connections, response timeout 250 ms), shrunk with 300 reruns / 60 s, a candidate kept after 2 reproductions.
  "messages": sent + received observations of the failing run before and after shrinking.
* Wall time of the whole benchmark: ${secs} s
$out
SECTION
)
python3 - "$section" <<'PY' 2>/dev/null || { echo "$section" >> bench/RESULTS.md; }
import sys, re
section = sys.argv[1].rstrip() + "\n"
path = "bench/RESULTS.md"
text = open(path).read()
pattern = re.compile(r"^## Shrinking\n.*?(?=^## |\Z)", re.S | re.M)
text = pattern.sub(section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
open(path, "w").write(text)
PY
echo "$section"
