#!/usr/bin/env bash
# Formats every tracked C++ file with clang-format (.clang-format at the root).
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  change nothing; list the files that differ and
#                              exit 1 if any does (the Format test runs this)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ ${#files[@]} -eq 0 ]; then
  echo "format.sh: no tracked C++ files (not a git checkout?)" >&2
  exit 2
fi
if [ "$mode" = "--check" ]; then
  # One clang-format for all files; each difference is reported as
  # "FILE:LINE:COL: error: code should be clang-formatted".
  mapfile -t bad < <(clang-format --dry-run "${files[@]}" 2>&1 |
    sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: \(warning\|error\): code should be clang-formatted.*/\1/p' | sort -u)
  if [ ${#bad[@]} -gt 0 ]; then
    echo "format.sh: ${#bad[@]} file(s) differ from .clang-format; run scripts/format.sh:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files match .clang-format"
elif [ -z "$mode" ]; then
  clang-format -i "${files[@]}"
else
  echo "usage: scripts/format.sh [--check]" >&2
  exit 2
fi
