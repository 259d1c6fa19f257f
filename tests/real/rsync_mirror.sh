#!/bin/sh
# Runs Debian's rsync once as a one-way mirror of replica A onto replica B,
# as the fs adapter's `run` does (specs/mirror.dspec,
# docs/real-servers.md): archive mode (-a: recursive, links as links,
# modes and times kept) with --delete (what A lacks goes from B), A's
# contents into B (the trailing slashes). rsync's exit code is the run's.
# Usage: rsync_mirror.sh A B
set -eu
exec rsync -a --delete "$1/" "$2/"
