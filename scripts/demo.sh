#!/usr/bin/env bash
# The README's demo command: installs what is needed, builds the binaries,
# runs the local tools (offline checker on the shipped example traces, the
# online tester, shrinking, replay) and then the distributed demo
# (scripts/swarm_demo.sh: coordinator on its embedded PostgreSQL, two
# workers, an 8-job swarm run, the grouped finding drawn as a sequence
# diagram).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
BUILD_DIR=${BUILD_DIR:-build}
echo "== building the dualswarm CLI, the coordinator, the worker and the reference servers"
ninja -C "$BUILD_DIR" dualswarm dualswarm-coordinator dualswarm-worker ds-ref-webdav
DS="$BUILD_DIR/dualswarm"

run() {  # run EXPECTED_EXIT description args...
  local want=$1 what=$2; shift 2
  echo
  echo "== $what"
  echo "\$ dualswarm $*"
  set +e
  "$DS" "$@"
  local got=$?
  set -e
  if [ "$got" -ne "$want" ]; then
    echo "demo: expected exit $want, got $got" >&2
    exit 1
  fi
}

run 0 "load the shipped specs" lint --spec specs/http_webdav.dspec
run 0 "load the kv spec" lint --spec specs/kv.dspec
run 0 "a WebDAV session with ETags and a 304, two connections: explained" \
  check --spec specs/http_webdav.dspec --trace specs/examples/webdav_ok.jsonl
run 1 "a server that answers 200 where RFC 9110 requires 304: rejected" \
  check --spec specs/http_webdav.dspec --trace specs/examples/webdav_200_instead_of_304.jsonl
run 0 "kv reads that race a write on another connection: explained by reordering" \
  check --spec specs/kv.dspec --trace specs/examples/kv_race_ok.jsonl
run 1 "kv stale read after the write was acknowledged: rejected" \
  check --spec specs/kv.dspec --trace specs/examples/kv_stale_read.jsonl
run 1 "the same, as JSON" \
  check --spec specs/kv.dspec --trace specs/examples/kv_stale_read.jsonl --json
run 0 "a relay (an intermediary): two clients on one origin connection, forwarded in reverse: explained" \
  check --spec specs/examples/relay.dspec --trace specs/examples/relay_shared_origin_ok.jsonl
run 1 "the same with the origin's answers swapped between the clients: rejected" \
  check --spec specs/examples/relay.dspec --trace specs/examples/relay_answers_swapped.jsonl
WEBDAV="$BUILD_DIR/tests/suts/ds-ref-webdav --port {port} --dir {dir}"
CX=$(mktemp /tmp/dualswarm-demo-cx.XXXXXX.json)
run 0 "the online tester against a correct WebDAV server (2000 requests, 4 connections)" \
  test --spec specs/http_webdav.dspec --launch "$WEBDAV" --steps 2000 --quiet
run 1 "the same against a server that answers 200 where 304 is required: found, shrunk, drawn" \
  test --spec specs/http_webdav.dspec --launch "$WEBDAV --mutant 6" --steps 2000 --save "$CX" --quiet
run 1 "replay the saved counterexample on 5 fresh servers" \
  replay "$CX" --launch "$WEBDAV --mutant 6" --times 5
rm -f "$CX"
echo
echo "== the service: a swarm run on a coordinator with two workers"
BUILD_DIR="$BUILD_DIR" bash scripts/swarm_demo.sh
echo
echo "demo: all verdicts as expected"
