#!/usr/bin/env bash
# False-alarm sweep: the online tester against the *correct* reference
# servers (webdav, kv, queue) for SEEDS seeds each, and the relay, the
# HTTP forward proxy and the HTTP cache (intermediaries: the tester plays
# their origin too) for RELAY_SEEDS each, default response
# timeout, swarm feature masks from the seed. A correct server must never
# get a finding; an INCONCLUSIVE run (a checker bound) is counted apart.
# Replaces the "## False-alarm sweep" section of bench/RESULTS.md and exits
# 1 when any run ended with a finding (its JSON is kept in $OUT_DIR).
#
#   SEEDS=100 STEPS=2000 RELAY_SEEDS=20 bash bench/run_false_alarm_sweep.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SEEDS=${SEEDS:-100}
STEPS=${STEPS:-2000}
RELAY_SEEDS=${RELAY_SEEDS:-20}
OUT_DIR=${OUT_DIR:-/tmp/ds-false-alarm-sweep}
bench_build dualswarm ds-ref-webdav ds-ref-kv ds-ref-queue ds-ref-relay ds-ref-proxy ds-ref-cache
bin="$PWD/$BENCH_BUILD_DIR"
mkdir -p "$OUT_DIR"
machine=$(bench_machine)
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')

# sweep NAME SPEC ADAPTER CONNECTIONS [SEEDS [LAUNCH_EXTRA [TEST_EXTRA]]]: one table row.
sweep() {
  local name=$1 spec=$2 adapter=$3 conns=$4 seeds=${5:-$SEEDS} launch_extra=${6:-} test_extra=${7:-}
  local seed rc passed=0 findings=0 inconclusive=0 other=0
  local start max_s=0 s t0
  start=$(date +%s)
  for seed in $(seq 1 "$seeds"); do
    t0=$(date +%s)
    rc=0
    "$bin/dualswarm" test --spec "specs/$spec" --adapter "$adapter" \
      --launch "$bin/tests/suts/ds-ref-$name --port {port} --dir {dir} $launch_extra" $test_extra \
      --seed "$seed" --connections "$conns" --swarm --steps "$STEPS" --no-shrink --json --quiet \
      >"$OUT_DIR/$name-$seed.json" 2>"$OUT_DIR/$name-$seed.err" || rc=$?
    s=$(( $(date +%s) - t0 ))
    [ "$s" -gt "$max_s" ] && max_s=$s
    case $rc in
      0) passed=$((passed + 1)); rm -f "$OUT_DIR/$name-$seed.json" "$OUT_DIR/$name-$seed.err" ;;
      1) findings=$((findings + 1)); echo "FINDING: $name seed $seed ($OUT_DIR/$name-$seed.json)" >&2 ;;
      2) if grep -q '"kind":"inconclusive"' "$OUT_DIR/$name-$seed.json"; then
           inconclusive=$((inconclusive + 1))
         else
           other=$((other + 1))
         fi
         echo "exit 2: $name seed $seed ($OUT_DIR/$name-$seed.json)" >&2 ;;
      *) other=$((other + 1)); echo "exit $rc: $name seed $seed" >&2 ;;
    esac
  done
  echo "| $name | $spec | $conns | $passed | $findings | $inconclusive | $other | $(( $(date +%s) - start )) | $max_s |"
  echo $((findings + other)) >>"$OUT_DIR/bad-runs"
}

rm -f "$OUT_DIR/bad-runs"
rows=""
rows+=$(sweep webdav http_webdav.dspec http 4)$'\n'
rows+=$(sweep kv kv.dspec jsonl 8)$'\n'
rows+=$(sweep queue queue.dspec jsonl 4)$'\n'
rows+=$(sweep relay examples/relay.dspec jsonl 4 "$RELAY_SEEDS" "--origin-port {origin_port} --origin-connections 2" \
  "--origins 1")$'\n'
rows+=$(sweep proxy http_proxy.dspec http 4 "$RELAY_SEEDS" "--origin-port {origin_port} --origin-connections 2" \
  "--origins 1")$'\n'
rows+=$(sweep cache http_cache.dspec http 4 "$RELAY_SEEDS" "--origin-port {origin_port} --origin-connections 2" \
  "--origins 1")$'\n'
section="## False-alarm sweep

Command: \`bash bench/run_false_alarm_sweep.sh\` (SEEDS=$SEEDS, RELAY_SEEDS=$RELAY_SEEDS, STEPS=$STEPS; Release build)

* Date: $date; $machine
* \`dualswarm test --swarm --steps $STEPS --no-shrink\` per seed against the correct reference servers
  (tests/suts), default \`--response-timeout\` (5000 ms) and checker bounds.
  A correct server must get no finding; \"other\" counts any other exit (a spec or launch error).

| server | spec | connections | passed | findings | inconclusive | other | total s | slowest run s |
|---|---|---|---|---|---|---|---|---|
$rows"
bench_replace_section "False-alarm sweep" "$section"
echo "$section"
[ "$(awk '{n += $1} END {print n + 0}' "$OUT_DIR/bad-runs")" -eq 0 ]
