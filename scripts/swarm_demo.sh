#!/usr/bin/env bash
# The distributed part of the demo (scripts/demo.sh runs it after the local
# part; run it alone after a build): starts dualswarm-coordinator on its
# embedded PostgreSQL and two dualswarm-worker daemons on loopback, registers
# the reference WebDAV server with mutant 6 (200 where RFC 9110 requires 304)
# as a target, pushes specs/http_webdav.dspec, submits an 8-job swarm run,
# follows it live, prints the grouped finding with its shrunk counterexample
# as a sequence diagram, and shuts everything down cleanly.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BIN="$PWD/$BUILD_DIR"
DEMO=$(mktemp -d /tmp/dualswarm-demo.XXXXXX)
chmod 711 "$DEMO"  # the embedded PostgreSQL runs as user postgres when we are root
PIDS=()

cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ $rc -ne 0 ]; then
    echo "swarm demo: failed (exit $rc); logs:" >&2
    for f in "$DEMO"/*.log; do echo "--- $f" >&2; tail -n 30 "$f" >&2; done
  fi
  rm -rf "$DEMO"
  exit $rc
}
trap cleanup EXIT INT TERM

step() { echo; echo "== $*"; }

wait_for_line() {  # FILE PATTERN SECONDS
  local deadline=$((SECONDS + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then echo "swarm demo: timed out waiting for '$2' in $1" >&2; return 1; fi
    sleep 0.1
  done
}

step "start the coordinator (embedded PostgreSQL in $DEMO/data)"
"$BIN/services/dualswarm-coordinator" --listen 127.0.0.1:0 --data-dir "$DEMO/data" \
  --metrics-listen 127.0.0.1:0 --lease-ms 10000 > "$DEMO/coordinator.log" 2>&1 &
PIDS+=($!)
wait_for_line "$DEMO/coordinator.log" "listening on 127.0.0.1:" 120
ADDR=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$DEMO/coordinator.log" | head -n 1)
echo "coordinator on $ADDR"
token() { "$BIN/services/dualswarm-coordinator" token create --role "$1" --name "demo-$1" --data-dir "$DEMO/data"; }
ADMIN=$(token admin)
SUBMITTER=$(token submitter)
WORKER=$(token worker)
export DUALSWARM_ADDR="$ADDR"

step "start two workers with two slots each"
for w in 1 2; do
  DUALSWARM_TOKEN="$WORKER" "$BIN/dualswarm-worker" --coordinator "$ADDR" --slots 2 --name "demo-worker-$w" \
    --work-dir "$DEMO/worker-$w" > "$DEMO/worker-$w.log" 2>&1 &
  PIDS+=($!)
done
for w in 1 2; do wait_for_line "$DEMO/worker-$w.log" "registered with" 60; done
echo "2 workers registered"

DS="$BIN/dualswarm"
show() { echo "\$ dualswarm $*"; }

step "register the reference WebDAV server with mutant 6 as a target (admin)"
LAUNCH="$BIN/tests/suts/ds-ref-webdav --port {port} --dir {dir} --mutant 6"
show target add webdav-mutant-6 --adapter http --launch "\"$LAUNCH\""
DUALSWARM_TOKEN="$ADMIN" "$DS" target add webdav-mutant-6 --adapter http --launch "$LAUNCH"

export DUALSWARM_TOKEN="$SUBMITTER"
step "push the spec"
show spec push specs/http_webdav.dspec
"$DS" spec push specs/http_webdav.dspec

step "submit an 8-job swarm run and follow it"
show run submit --spec-name http_webdav --target webdav-mutant-6 --jobs 8 --steps 2000 --watch
set +e
"$DS" run submit --spec-name http_webdav --target webdav-mutant-6 --jobs 8 --steps 2000 --seed 1 --watch \
  | tee "$DEMO/submit.out"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 1 ]; then echo "swarm demo: expected the run to fail with findings (exit 1), got $rc" >&2; exit 1; fi
RUN=$(sed -n 's/^run \([0-9]*\) submitted.*/\1/p' "$DEMO/submit.out" | head -n 1)

step "the findings of run $RUN, grouped by signature"
show finding list --run "$RUN"
"$DS" finding list --run "$RUN" | tee "$DEMO/findings.out"
FINDING=$(awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1; exit}' "$DEMO/findings.out")
if [ -z "$FINDING" ]; then echo "swarm demo: no finding listed" >&2; exit 1; fi

step "the finding with its smallest shrunk counterexample"
show finding show "$FINDING" --save "$DEMO/cx.json"
"$DS" finding show "$FINDING" --save "$DEMO/cx.json"

step "replay it from the coordinator's copy on 3 fresh servers"
show replay cx.json --spec specs/http_webdav.dspec --launch "\"$LAUNCH\"" --times 3
set +e
"$DS" replay "$DEMO/cx.json" --spec specs/http_webdav.dspec --launch "$LAUNCH" --times 3
rc=$?
set -e
if [ "$rc" -ne 1 ]; then echo "swarm demo: expected every replay to reproduce (exit 1), got $rc" >&2; exit 1; fi

step "shut down: workers (SIGTERM: finish and report), then the coordinator (stops its PostgreSQL)"
for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
  kill -TERM "${PIDS[$i]}"
  wait "${PIDS[$i]}" || { echo "swarm demo: process ${PIDS[$i]} did not stop cleanly" >&2; exit 1; }
done
PIDS=()
echo "all stopped"
