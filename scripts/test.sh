#!/usr/bin/env bash
# The README's test command: installs what is needed, builds everything the
# tests use, and runs the whole test suite under CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
BUILD_DIR=${BUILD_DIR:-build}
echo "== building"
ninja -C "$BUILD_DIR"
echo "== testing"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 --timeout 900
