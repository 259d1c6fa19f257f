#!/bin/sh
# Runs Debian's unison once on two local replicas A and B, as the fs
# adapter's `run` does (docs/real-servers.md): batch mode (no questions),
# silent, a sync may empty a replica (-confirmbigdel=false), its fast check
# (size, time and inode, no contents) on or off. Unison keeps its archive
# under $UNISON: DIR, the job's directory, so every job starts from an empty
# archive and jobs never share one. Unison's exit code is the run's (0
# synced, 1 some paths skipped, 2 non-fatal failures, 3 fatal).
# Usage: unison_sync.sh A B DIR [FASTCHECK]   (FASTCHECK true|false, default true)
set -eu
a=$1
b=$2
dir=$3
fastcheck=${4:-true}
UNISON="$dir/unison-home" exec unison "$a" "$b" -batch -confirmbigdel=false -silent -fastcheck "$fastcheck"
