#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang in build-fuzz (Ninja,
# ccache, -DDS_FUZZ=ON: only the engine libraries they need) and runs each
# for SECONDS (default 600). Usage: scripts/fuzz.sh [SECONDS]
#   FUZZ_TARGETS="json spec"  run only these (default: all of them)
#   FUZZ_DIR=DIR              build dir (default build-fuzz)
# Each target starts from its seeds in tests/fuzz/corpus/<target>/, copied
# into DIR/fuzz-corpus/<target>/ (new inputs accumulate there, never in the
# repository). Prints total execs and execs/s per target; exits non-zero
# when any target crashed, timed out (-timeout, 10 s per input) or ran out
# of memory (-rss_limit_mb=1024), and prints the path of the input that did
# (reproduce: DIR/tests/fuzz/fuzz_<target> PATH; see docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH=${1:-600}
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
ALL_TARGETS="json jexpr trace codec resp spec"
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}
PER_INPUT_TIMEOUT=10
RSS_LIMIT_MB=1024

export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
if [ ! -f "$FUZZ_DIR/build.ninja" ]; then
  echo "== configuring $FUZZ_DIR (clang, DS_FUZZ=ON)"
  CC=clang CXX=clang++ cmake -S . -B "$FUZZ_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDS_FUZZ=ON >/dev/null
fi
bins=()
for t in $TARGETS; do bins+=("fuzz_$t"); done
echo "== building ${bins[*]}"
ninja -C "$FUZZ_DIR" -j2 "${bins[@]}"

# Runs one target; prints its summary line; returns libFuzzer's exit code.
run_target() {
  local t=$1 bin="$FUZZ_DIR/tests/fuzz/fuzz_$1"
  local corpus="$FUZZ_DIR/fuzz-corpus/$t" artifacts="$FUZZ_DIR/fuzz-artifacts/$t"
  local log="$FUZZ_DIR/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  local seed
  for seed in tests/fuzz/corpus/"$t"/*; do
    [ -e "$corpus/$(basename "$seed")" ] || cp "$seed" "$corpus/"
  done
  local dict=()
  [ -f "tests/fuzz/$t.dict" ] && dict=("-dict=tests/fuzz/$t.dict")
  # Spec loads cost time per byte; inputs up to 2 KB reach every limit
  # (tests/fuzz/corpus/spec/exp_*.dspec are under 1.5 KB) at twice the rate.
  [ "$t" = spec ] && dict+=("-max_len=2048")
  local rc=0
  # The outer timeout only guards against libFuzzer itself wedging.
  timeout --signal=KILL $((SECONDS_EACH + 120)) "$bin" "$corpus" "${dict[@]}" \
    -max_total_time="$SECONDS_EACH" -timeout="$PER_INPUT_TIMEOUT" -rss_limit_mb="$RSS_LIMIT_MB" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  local runs secs
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  if [ -z "$runs" ]; then  # a crash ends the run before the final stats
    runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  fi
  runs=${runs:-0}
  secs=${secs:-$SECONDS_EACH}
  local rate=$((runs / (secs > 0 ? secs : 1)))
  if [ "$rc" -eq 0 ]; then
    printf '%-12s ok     %8s s %12s execs %9s execs/s  corpus %s\n' "fuzz_$t" "$secs" "$runs" "$rate" \
      "$(ls "$corpus" | wc -l)"
  else
    printf '%-12s FAILED (exit %s) after ~%s execs; log %s\n' "fuzz_$t" "$rc" "$runs" "$log"
    grep -E '^==[0-9]+==|^fuzz_|ALARM|SUMMARY|out-of-memory|deadly signal' "$log" | head -8 | sed 's/^/    /'
    grep -o 'Test unit written to .*' "$log" | sed 's/^Test unit written to /    input: /'
  fi
  return "$rc"
}

echo "== fuzzing each target for ${SECONDS_EACH} s"
failed=()
for t in $TARGETS; do
  run_target "$t" || failed+=("fuzz_$t")
done
n_all=$(echo $TARGETS | wc -w)
if [ ${#failed[@]} -gt 0 ]; then
  echo "== fuzzing FAILED: ${failed[*]} (inputs above; reproduce with $FUZZ_DIR/tests/fuzz/<target> INPUT)"
  echo "fuzz: $((n_all - ${#failed[@]})) passed, ${#failed[@]} failed"
  exit 1
fi
echo "fuzz: $n_all passed, 0 failed"
