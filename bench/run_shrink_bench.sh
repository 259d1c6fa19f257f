#!/usr/bin/env bash
# Shrinking benchmark: per mutant of the reference servers, messages before
# and after shrinking, reruns and shrink time (medians over SEEDS seeds).
# Replaces the "## Shrinking" section of bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-10}
bench_build shrink_bench ds-ref-webdav ds-ref-kv
machine=$(bench_machine)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
start=$(date +%s)
out=$(build-bench/bench/shrink_bench "$PWD" "$PWD/build-bench/tests/suts/ds-ref-webdav" \
      "$PWD/build-bench/tests/suts/ds-ref-kv" "$SEEDS")
secs=$(( $(date +%s) - start ))
section="## Shrinking

Command: \`bash bench/run_shrink_bench.sh\` (SEEDS=$SEEDS; runs \`build-bench/bench/shrink_bench\`, Release build)

* Date: $date; $machine
* Each mutant: the first failing seed from SEED*1000 on (steps 1000, 4 connections, response timeout 250 ms), shrunk with the default budget (500 reruns / 60 s; a candidate is kept after 3 reproductions, discarded after 2 failed reruns). \"complete\": seeds whose shrinking ended without hitting the budget.
  \"messages\": sent + received observations of the failing run before and after shrinking.
* Wall time of the whole benchmark: ${secs} s
$out"
bench_replace_section "Shrinking" "$section"
echo "$section"
