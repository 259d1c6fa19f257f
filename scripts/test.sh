#!/usr/bin/env bash
# The README's test command: installs what is needed, builds everything the
# tests use, runs the whole test suite under CTest, then a short bounded run
# of every libFuzzer target (scripts/fuzz.sh; FUZZ_SECONDS each, default 20,
# 0 skips it; docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
BUILD_DIR=${BUILD_DIR:-build}
echo "== building"
ninja -C "$BUILD_DIR"
echo "== testing"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 --timeout 900
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
if [ "$FUZZ_SECONDS" -gt 0 ]; then
  echo "== fuzzing (${FUZZ_SECONDS} s per target)"
  bash scripts/fuzz.sh "$FUZZ_SECONDS"
fi
