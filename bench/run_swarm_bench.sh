#!/usr/bin/env bash
# Swarm benchmark (issue 6): time to the first finding of a hard mutant with
# 1 worker x 1 slot vs 2 workers x 2 slots, and the end-to-end overhead per
# job, through the real service: one dualswarm-coordinator on its embedded
# PostgreSQL, dualswarm-worker daemons (restarted per configuration) and the
# `dualswarm` CLI, all on 127.0.0.1. Replaces the "## Swarm scaling" section
# of bench/RESULTS.md.
#
#   bash bench/run_swarm_bench.sh
#   BUILD_DIR=build-swarmbench bash bench/run_swarm_bench.sh
#
# Knobs (defaults in brackets): BUILD_DIR [build] (the binaries are built
# there first with ninja; SKIP_BUILD=1 uses them as they are), MUTANT [25]
# (ds-ref-webdav mutant of the hard runs), STEPS [100] (per-job budget of the
# hard runs), JOBS [32], REPS [10] (repetitions per configuration, seeds
# SEED_BASE+1..SEED_BASE+REPS [0], the same for every configuration), CONFIGS
# ["1x1 2x2 1x1-noshrink 2x2-noshrink"]: WORKERSxSLOTS, "-noshrink" runs the
# workers with --shrink-reruns 0), CALIB_REPS [3] (whole runs, seeds
# SEED_BASE+1.., that count how many jobs find the bug), OVERHEAD_JOBS [40], OVERHEAD_REPS [3],
# LATENCY_REPS [10], RUN_TIMEOUT [120] (seconds; a run that does not end by
# then is cancelled and reported as a failed measurement), HARD_BUDGET [480]
# (seconds for all hard-mutant runs; repetitions left when it is spent are
# skipped and reported as skipped), LEASE_MS [3000]
# (the coordinator's --lease-ms: workers heartbeat every LEASE_MS/3 and learn
# then that a stopped run's jobs are cancelled), WRITE_RESULTS [1],
# NOTES_FILE (markdown appended to the section: observations about the run).
# BUILD_DIR may be absolute, e.g. the build of a clean `git worktree` of the
# commit to measure; the commit recorded is that of the build's source tree.
#
# The timing and the report are done by a Python helper (written to the temp
# directory) that drives the CLI, reads the coordinator's timestamps from its
# PostgreSQL with psql, polls the workers' /metrics for busy slots, and parses
# the workers' logs.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

BUILD_DIR=${BUILD_DIR:-build}
MUTANT=${MUTANT:-25}
STEPS=${STEPS:-100}
JOBS=${JOBS:-32}
REPS=${REPS:-10}
SEED_BASE=${SEED_BASE:-0}
CONFIGS=${CONFIGS:-"1x1 2x2 1x1-noshrink 2x2-noshrink"}
CALIB_REPS=${CALIB_REPS:-3}
OVERHEAD_JOBS=${OVERHEAD_JOBS:-40}
OVERHEAD_REPS=${OVERHEAD_REPS:-3}
LATENCY_REPS=${LATENCY_REPS:-10}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
LEASE_MS=${LEASE_MS:-3000}
WRITE_RESULTS=${WRITE_RESULTS:-1}
case $BUILD_DIR in /*) BIN="$BUILD_DIR" ;; *) BIN="$PWD/$BUILD_DIR" ;; esac
HARD_BUDGET=${HARD_BUDGET:-480}

log() { echo "[swarm-bench $(date -u +%H:%M:%S)] $*" >&2; }

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  log "building in $BUILD_DIR"
  CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true \
    ninja -C "$BIN" dualswarm dualswarm-coordinator dualswarm-worker ds-ref-webdav >/dev/null
fi
for b in dualswarm dualswarm-worker services/dualswarm-coordinator tests/suts/ds-ref-webdav; do
  [ -x "$BIN/$b" ] || { echo "swarm bench: $BIN/$b is missing (build it first)" >&2; exit 2; }
done
command -v psql >/dev/null || { echo "swarm bench: psql is needed (it reads the coordinator's timestamps)" >&2; exit 2; }
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$BIN/CMakeCache.txt" 2>/dev/null || true)
src_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$BIN/CMakeCache.txt" 2>/dev/null || true)
[ -d "$src_dir" ] || src_dir=$PWD
[ -n "$build_type" ] || build_type="RelWithDebInfo (the project's default)"

WORK=$(mktemp -d /tmp/dualswarm-swarmbench.XXXXXX)
chmod 711 "$WORK"  # the embedded PostgreSQL runs as user postgres when we are root
COORD_PID=""
WORKER_PIDS=()
METRICS=""
bench_start=$SECONDS

# stop_pid PID SECONDS: SIGTERM, wait up to SECONDS, then SIGKILL.
stop_pid() {
  local pid=$1 limit=$2 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < limit * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.1
  done
  log "process $pid did not stop in ${limit} s; killing it"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

stop_workers() {
  local pid
  for pid in "${WORKER_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${WORKER_PIDS[@]}"; do stop_pid "$pid" 20; done
  WORKER_PIDS=()
  METRICS=""
}

stop_all() {
  stop_workers
  if [ -n "$COORD_PID" ]; then stop_pid "$COORD_PID" 60; COORD_PID=""; fi
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_all
  local left
  left=$(pgrep -af -- "$WORK" || true)
  if [ -n "$left" ]; then
    echo "swarm bench: processes left behind under $WORK:" >&2
    echo "$left" >&2
    rc=1
  fi
  if [ $rc -ne 0 ]; then
    echo "swarm bench: failed (exit $rc); log tails:" >&2
    for f in "$WORK"/*.log; do [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }; done
  fi
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "swarm bench: kept $WORK" >&2; else rm -rf "$WORK"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

wait_for_line() {  # FILE PATTERN SECONDS
  local deadline=$((SECONDS + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then echo "swarm bench: timed out waiting for '$2' in $1" >&2; return 1; fi
    sleep 0.1
  done
}

# start_workers LABEL COUNT SLOTS [worker flags...]
start_workers() {
  local label=$1 count=$2 slots=$3 w
  shift 3
  for ((w = 1; w <= count; w++)); do
    DUALSWARM_TOKEN="$WORKER_TOKEN" "$BIN/dualswarm-worker" --coordinator "$ADDR" --slots "$slots" \
      --name "$label-w$w" --work-dir "$WORK/$label-w$w" --metrics-listen 127.0.0.1:0 --drain-seconds 2 "$@" \
      > "$WORK/$label-w$w.log" 2>&1 &
    WORKER_PIDS+=($!)
  done
  for ((w = 1; w <= count; w++)); do
    wait_for_line "$WORK/$label-w$w.log" "registered with" 60
    METRICS+=" $(sed -n 's/.*metrics on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$WORK/$label-w$w.log" | head -n 1)"
  done
}

write_helper() {
cat > "$WORK/swarm_bench.py" <<'PY'
# Helper of bench/run_swarm_bench.sh: one measurement per call, results
# appended as JSON lines to $WORK/results.jsonl; "report" prints markdown.
import datetime, glob, json, os, re, select, statistics, subprocess, sys, time, urllib.request

E = os.environ
DS, WORK = E["DS"], E["WORK"]
RUN_TIMEOUT = float(E["RUN_TIMEOUT"])
RESULTS = os.path.join(WORK, "results.jsonl")


def sql(query):
    env = dict(E, PGPASSWORD=E["PGPASSWORD"], PGCONNECT_TIMEOUT="5")
    p = subprocess.run(["psql", "-h", "127.0.0.1", "-p", E["PGPORT"], "-U", "dualswarm", "-d", "dualswarm",
                        "-AtX", "-F", "|", "-c", query], capture_output=True, text=True, timeout=30, env=env)
    if p.returncode != 0:
        raise RuntimeError("psql: " + p.stderr.strip())
    return [line.split("|") for line in p.stdout.splitlines() if line]


def f(x):
    return float(x) if x not in (None, "") else None


def busy_slots():
    total = 0.0
    for addr in E.get("METRICS", "").split():
        with urllib.request.urlopen("http://%s/metrics" % addr, timeout=2) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("dualswarm_worker_slots_busy"):
                    total += float(line.split()[-1])
    return total


def wait_idle(limit=60.0):
    """Client time when every worker slot is idle (polled every 50 ms), or None."""
    deadline = time.time() + limit
    while time.time() < deadline:
        if busy_slots() == 0:
            return time.time()
        time.sleep(0.05)
    return None


def cli(*args, timeout=30):
    p = subprocess.run([DS, *args], capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("dualswarm %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p.stdout


def run_once(target, jobs, steps, seed, stop_first, follow):
    """Submits a run and waits (bounded) for its final state.

    follow = "watch": `dualswarm run watch ID --json` (the coordinator polls
    the run every 250 ms; one process, little CPU); "poll": `dualswarm run
    show ID --json` every 50 ms. Returns client times (epoch seconds) and the
    run id."""
    args = ["run", "submit", "--spec-name", "http_webdav", "--target", target, "--jobs", str(jobs),
            "--steps", str(steps), "--seed", str(seed), "--json"]
    if stop_first:
        args.append("--stop-at-first-finding")
    t0 = time.time()
    run = json.loads(cli(*args).strip().splitlines()[-1])
    rid = int(run["id"])
    res = {"run": rid, "t0": t0, "t_submitted": time.time(), "t_seen_failed": None, "t_seen_final": None,
           "timeout": False}
    deadline = t0 + RUN_TIMEOUT

    def event(ev_run, final, now):
        if res["t_seen_failed"] is None and int(ev_run.get("counts", {}).get("failed", 0)) > 0:
            res["t_seen_failed"] = now
        if final:
            res["t_seen_final"] = now

    if follow == "watch":
        w = subprocess.Popen([DS, "run", "watch", str(rid), "--json"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        buf = b""
        try:
            while res["t_seen_final"] is None:
                left = deadline - time.time()
                if left <= 0:
                    res["timeout"] = True
                    break
                r, _, _ = select.select([w.stdout], [], [], min(left, 1.0))
                if not r:
                    continue
                chunk = os.read(w.stdout.fileno(), 65536)
                now = time.time()
                if not chunk:
                    break  # watch ended (final state or an error)
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        ev = json.loads(line)
                        event(ev.get("run", {}), bool(ev.get("final")), now)
        finally:
            if w.poll() is None:
                w.kill()
            w.wait()
    else:
        while res["t_seen_final"] is None:
            if time.time() > deadline:
                res["timeout"] = True
                break
            r = json.loads(cli("run", "show", str(rid), "--json"))
            now = time.time()
            event(r, r.get("state") in ("RUN_STATE_PASSED", "RUN_STATE_FAILED", "RUN_STATE_CANCELLED",
                                        "RUN_STATE_ERROR"), now)
            time.sleep(0.05)
    if res["t_seen_final"] is None and not res["timeout"]:
        res["timeout"] = time.time() > deadline
    if res["timeout"]:
        try:
            cli("run", "cancel", str(rid))
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            res["cancel_error"] = str(e)
    return res


def run_facts(rid):
    """The coordinator's view of a run: its timestamps, job states, attempts, first counterexample."""
    (state, created, started, finished), = sql(
        "SELECT state, extract(epoch from created_at), extract(epoch from started_at),"
        " extract(epoch from finished_at) FROM runs WHERE id = %d" % rid)
    facts = {"state": state, "created": f(created), "started": f(started), "finished": f(finished)}
    facts["jobs"] = {s: int(n) for s, n in sql("SELECT state, count(*) FROM jobs WHERE run_id = %d GROUP BY state" % rid)}
    facts["attempts"] = [
        {"job": int(j), "idx": int(i), "leased": f(l), "completed": f(c), "outcome": o, "seconds": f(s), "sent": int(n)}
        for j, i, l, c, o, s, n in sql(
            "SELECT a.job_id, j.idx, extract(epoch from a.leased_at), extract(epoch from a.completed_at),"
            " a.outcome, a.seconds, a.sent FROM job_attempts a JOIN jobs j ON j.id = a.job_id"
            " WHERE j.run_id = %d ORDER BY a.leased_at" % rid)]
    cx = sql("SELECT extract(epoch from created_at), job_id, size, unshrunk_size FROM counterexamples"
             " WHERE run_id = %d ORDER BY created_at, id LIMIT 1" % rid)
    facts["first_cx"] = ({"created": f(cx[0][0]), "job": int(cx[0][1]), "size": int(cx[0][2]),
                          "unshrunk": int(cx[0][3])} if cx else None)
    facts["counterexamples"] = int(sql("SELECT count(*) FROM counterexamples WHERE run_id = %d" % rid)[0][0])
    return facts


def append(rec):
    with open(RESULTS, "a") as out:
        out.write(json.dumps(rec) + "\n")


def cmd_hard(config, rep, seed):
    target, jobs, steps = E["HARD_TARGET"], int(E["JOBS"]), int(E["STEPS"])
    t_idle_before = wait_idle(60)
    res = run_once(target, jobs, steps, seed, True, "watch")
    res["t_idle"] = wait_idle(60)
    res.update(run_facts(res["run"]))
    res.update({"kind": "hard", "config": config, "rep": rep, "seed": seed, "idle_before": t_idle_before is not None})
    append(res)
    t0 = res["t0"]
    cxt = res["first_cx"]["created"] - t0 if res["first_cx"] else None
    print("  %s rep %d seed %d: run %d %s, first report %s, run end %s, idle %s" % (
        config, rep, seed, res["run"], res["state"], "%.2f s" % cxt if cxt is not None else "none",
        "%.2f s" % (res["finished"] - t0) if res["finished"] else "-",
        "%.2f s" % (res["t_idle"] - t0) if res["t_idle"] else "-"), file=sys.stderr, flush=True)


def cmd_calib(seed):
    """A whole run without --stop-at-first-finding: how many of its jobs find the bug."""
    wait_idle(60)
    res = run_once(E["HARD_TARGET"], int(E["JOBS"]), int(E["STEPS"]), seed, False, "watch")
    res.update(run_facts(res["run"]))
    res.update({"kind": "calib", "seed": seed})
    append(res)
    print("  calibration seed %d: run %d %s, %s" % (seed, res["run"], res["state"], res["jobs"]),
          file=sys.stderr, flush=True)


def cmd_overhead(kind, jobs, rep):
    wait_idle(60)
    res = run_once(E["OK_TARGET"], jobs, 1, 1000 + rep, False, "poll" if jobs == 1 else "watch")
    res.update(run_facts(res["run"]))
    res.update({"kind": kind, "jobs_requested": jobs, "rep": rep})
    append(res)
    print("  %s rep %d: run %d %s in %.3f s (client, submit to final seen)" % (
        kind, rep, res["run"], res["state"], (res["t_seen_final"] or float("nan")) - res["t0"]),
          file=sys.stderr, flush=True)


def cmd_localref(reps):
    """`dualswarm test --steps 1 --no-shrink` against the correct server: one job without the service."""
    times = []
    for _ in range(reps):
        t0 = time.time()
        subprocess.run([DS, "test", "--spec", "specs/http_webdav.dspec", "--launch", E["OK_LAUNCH"],
                        "--steps", "1", "--no-shrink", "--seed", "1"], capture_output=True, timeout=60, check=True)
        times.append(time.time() - t0)
    append({"kind": "localref", "times": times})


# ---------------------------------------------------------------- report

def worker_log_times():
    """job id -> {"started": epoch, "ended": epoch} from the workers' logs (HH:MM:SS.mmm UTC)."""
    out = {}
    day = datetime.datetime.now(datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    for path in glob.glob(os.path.join(WORK, "*-w*.log")):
        for line in open(path, errors="replace"):
            m = re.match(r"(\d\d):(\d\d):(\d\d\.\d+) dualswarm-worker: job (\d+)(.*)", line)
            if not m:
                continue
            secs = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
            t = day.timestamp() + secs
            if t > time.time() + 3600:
                t -= 86400  # logged before midnight UTC
            rest = m.group(5)
            rec = out.setdefault(int(m.group(4)), {})
            if rest.endswith(": started"):
                rec["started"] = t
            elif re.match(r": (passed|failed|inconclusive|error) in ", rest):
                rec["ended"] = t
    return out


def stats(xs, fmt="%.2f"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-", "-", "-"
    return fmt % statistics.median(xs), fmt % min(xs), fmt % max(xs)


def mmm(xs, fmt="%.2f"):
    med, lo, hi = stats(xs, fmt)
    return "%s (%s–%s)" % (med, lo, hi) if med != "-" else "-"


def cmd_report():
    recs = [json.loads(line) for line in open(RESULTS)]
    logs = worker_log_times()
    out = []
    P = out.append
    hard = [r for r in recs if r["kind"] == "hard"]
    configs = []
    for r in hard:
        if r["config"] not in configs:
            configs.append(r["config"])
    calib = [r for r in recs if r["kind"] == "calib"]
    if calib:
        parts, found, total, secs = [], 0, 0, []
        for r in calib:
            if r["timeout"]:
                parts.append("seed %d: timed out" % r["seed"])
                continue
            n, t = r["jobs"].get("failed", 0), sum(r["jobs"].values())
            found, total = found + n, total + t
            secs += [a["seconds"] for a in r["attempts"]]
            parts.append("seed %d: %d of %d" % (r["seed"], n, t))
        P("Calibration (whole runs without `--stop-at-first-finding`, 2 workers × 2 slots, shrinking off): jobs that found the bug: %s; **%d of %d jobs (%.0f%%)**; job time median %.2f s, max %.2f s." % (
            "; ".join(parts), found, total, 100.0 * found / max(total, 1), statistics.median(secs) if secs else 0,
            max(secs) if secs else 0))
        P("")
    if hard:
        P("| workers × slots | shrinking | runs with a finding | first report (s) | finding seen by the client (s) | run end (s) | workers idle (s) | jobs started before the first report | other jobs running for ≥ 1 s at the first report | first finder: job s (child) | first finder: requests before → after shrinking |")
        P("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for c in configs:
            rs = [r for r in hard if r["config"] == c]
            ok = [r for r in rs if not r["timeout"]]
            found = [r for r in ok if r["first_cx"]]
            w, s = c.split("-")[0].split("x")
            first = [r["first_cx"]["created"] - r["t0"] for r in found]
            seen = [r["t_seen_failed"] - r["t0"] for r in found if r["t_seen_failed"]]
            end = [r["finished"] - r["t0"] for r in ok if r["finished"]]
            idle = [r["t_idle"] - r["t0"] for r in ok if r["t_idle"]]
            started = [sum(1 for a in r["attempts"] if a["leased"] <= r["first_cx"]["created"]) for r in found]
            # Jobs other than the first finder that had been running for a
            # second or more when the first report landed: passing jobs take
            # about 0.1-0.4 s, so these were shrinking a detection of their
            # own or checking a trace whose rejection is expensive.
            others = [sum(1 for a in r["attempts"] if a["job"] != r["first_cx"]["job"]
                          and a["leased"] <= r["first_cx"]["created"] - 1.0
                          and (a["completed"] is None or a["completed"] >= r["first_cx"]["created"]))
                      for r in found]
            child = []
            sizes = []
            for r in found:
                a = [a for a in r["attempts"] if a["job"] == r["first_cx"]["job"]]
                child.append(a[0]["seconds"] if a else None)
                sizes.append((r["first_cx"]["unshrunk"], r["first_cx"]["size"]))
            size_txt = ("%d → %d" % (statistics.median(x for x, _ in sizes), statistics.median(y for _, y in sizes))
                        if sizes else "-")
            P("| %s × %s | %s | %d/%d%s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                w, s, "off (--shrink-reruns 0)" if c.endswith("noshrink") else "default (500 reruns / 60 s)",
                len(found), len(rs), (", %d timed out" % (len(rs) - len(ok))) if len(ok) < len(rs) else "",
                mmm(first), mmm(seen), mmm(end), mmm(idle), mmm(started, "%.0f"), mmm(others, "%.0f"), mmm(child),
                size_txt))
        P("")
        P("Median (min–max) over the runs; times in seconds from the client's `dualswarm run submit`.")
        # Paired comparison of the first report per seed.
        pairs = [("1x1", "2x2"), ("1x1-noshrink", "2x2-noshrink")]
        for a, b in pairs:
            ra = {r["seed"]: r for r in hard if r["config"] == a and r["first_cx"]}
            rb = {r["seed"]: r for r in hard if r["config"] == b and r["first_cx"]}
            common = sorted(set(ra) & set(rb))
            if not common:
                continue
            ratios = [(ra[s]["first_cx"]["created"] - ra[s]["t0"]) / (rb[s]["first_cx"]["created"] - rb[s]["t0"])
                      for s in common]
            faster = sum(1 for x in ratios if x > 1)
            P("Paired by seed, %s vs %s (first report): 2×2 sooner for %d of %d seeds; speed-up (1×1 time / 2×2 time) median %.2f, min %.2f, max %.2f." % (
                a, b, faster, len(common), statistics.median(ratios), min(ratios), max(ratios)))
        P("")
        P("Per run (first report s / run end s; `-`: no finding):")
        P("")
        P("| seed | " + " | ".join(configs) + " |")
        P("|--:|" + "--:|" * len(configs))
        seeds = sorted({r["seed"] for r in hard})
        for sd in seeds:
            cells = []
            for c in configs:
                r = next((r for r in hard if r["config"] == c and r["seed"] == sd), None)
                if r is None:
                    cells.append("")
                elif r["timeout"]:
                    cells.append("timeout")
                else:
                    fr = "%.2f" % (r["first_cx"]["created"] - r["t0"]) if r["first_cx"] else "-"
                    cells.append("%s / %.2f" % (fr, r["finished"] - r["t0"]))
            P("| %d | %s |" % (sd, " | ".join(cells)))
        P("")

    # ------------------------------------------------------ overhead
    many = [r for r in recs if r["kind"] == "overhead-many"]
    single = [r for r in recs if r["kind"] == "overhead-single"]
    local = [r for r in recs if r["kind"] == "localref"]

    def breakdown(rs):
        rows = {"submit → run created (CLI + Submit)": [], "run created → job leased": [],
                "leased → worker started the job process": [], "job process (worker log: started → result)": [],
                "  of which the child's own time (CompleteJob.seconds)": [],
                "result → completion recorded (CompleteJob)": [], "completion → run final": [],
                "run final → client saw it": []}
        for r in rs:
            if r["timeout"]:
                continue
            for a in r["attempts"]:
                lg = logs.get(a["job"], {})
                rows["run created → job leased"].append(a["leased"] - r["created"])
                if "started" in lg:
                    rows["leased → worker started the job process"].append(lg["started"] - a["leased"])
                if "started" in lg and "ended" in lg:
                    rows["job process (worker log: started → result)"].append(lg["ended"] - lg["started"])
                rows["  of which the child's own time (CompleteJob.seconds)"].append(a["seconds"])
                if "ended" in lg and a["completed"]:
                    rows["result → completion recorded (CompleteJob)"].append(a["completed"] - lg["ended"])
            rows["submit → run created (CLI + Submit)"].append(r["created"] - r["t0"])
            last = max((a["completed"] for a in r["attempts"] if a["completed"]), default=None)
            if last and r["finished"]:
                rows["completion → run final"].append(r["finished"] - last)
            if r["t_seen_final"] and r["finished"]:
                rows["run final → client saw it"].append(r["t_seen_final"] - r["finished"])
        return rows

    if many:
        slots = int(E["OVERHEAD_SLOTS"])
        P("**%d jobs, `--steps 1`, correct server, 2 workers × 2 slots** (%d runs):" % (many[0]["jobs_requested"], len(many)))
        P("")
        P("| run | state | wall s (submit → run finished) | coordinator s (created → finished) | overhead per job s (wall × %d slots / jobs) | mean child time per job s |" % slots)
        P("|--:|---|--:|--:|--:|--:|")
        per_job = []
        for r in many:
            if r["timeout"]:
                P("| %d | timed out after %d s | | | | |" % (r["run"], RUN_TIMEOUT))
                continue
            wall = r["finished"] - r["t0"]
            n = r["jobs_requested"]
            pj = wall * slots / n
            per_job.append(pj)
            child = statistics.mean(a["seconds"] for a in r["attempts"])
            P("| %d | %s | %.2f | %.2f | %.3f | %.3f |" % (r["run"], r["state"], wall, r["finished"] - r["created"], pj, child))
        if per_job:
            P("")
            P("Overhead per job (median of the runs): **%.3f s** of slot time." % statistics.median(per_job))
        P("")
    if single:
        ok = [r for r in single if not r["timeout"]]
        lat = [r["t_seen_final"] - r["t0"] for r in ok]
        coord = [r["finished"] - r["created"] for r in ok]
        P("**Single-job latency** (1-job run, `--steps 1`, correct server, 2 workers × 2 slots idle, %d runs, client polls `run show` every 50 ms): submit → passed seen by the client **%s s** median (min %s, max %s); coordinator created → finished %s s.%s" % (
            len(single), *stats(lat, "%.3f"), stats(coord, "%.3f")[0],
            " %d timed out." % (len(single) - len(ok)) if len(ok) < len(single) else ""))
        P("")
    if many or single:
        P("Where the time goes (median per job; min–max; worker log timestamps have ms resolution, the coordinator's are PostgreSQL `now()` at the transaction's start):")
        P("")
        cols = []
        if single:
            cols.append(("1-job runs", breakdown(single)))
        if many:
            cols.append(("%d-job runs" % many[0]["jobs_requested"], breakdown(many)))
        P("| step | " + " | ".join(c for c, _ in cols) + " |")
        P("|---|" + "--:|" * len(cols))
        for key in cols[0][1]:
            P("| %s | %s |" % (key.replace("  of which", "↳ of which"),
                               " | ".join(mmm(rows[key], "%.3f") for _, rows in cols)))
        P("")
    if local:
        t = local[0]["times"]
        P("Reference without the service: `dualswarm test --steps 1 --no-shrink` against the correct server (spec load, SUT launch and readiness, one request, teardown; %d runs): median %.3f s (min %.3f, max %.3f)." % (
            len(t), statistics.median(t), min(t), max(t)))
    print("\n".join(out))


def main():
    cmd = sys.argv[1]
    if cmd == "hard":
        cmd_hard(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "calib":
        cmd_calib(int(sys.argv[2]))
    elif cmd == "overhead":
        cmd_overhead(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "localref":
        cmd_localref(int(sys.argv[2]))
    elif cmd == "report":
        cmd_report()
    else:
        raise SystemExit("unknown command " + cmd)


main()
PY
}

helper() { METRICS="$METRICS" python3 "$WORK/swarm_bench.py" "$@"; }

# ------------------------------------------------------------------ setup
machine=$(cd "$src_dir" && bench_machine engine workers services cli proto)
[ "$src_dir" = "$PWD" ] || machine+=" (built from $(cd "$src_dir" && git rev-parse --short HEAD) in a separate worktree)"
date=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
write_helper

log "starting the coordinator (embedded PostgreSQL in $WORK/data)"
"$BIN/services/dualswarm-coordinator" --listen 127.0.0.1:0 --data-dir "$WORK/data" \
  --metrics-listen 127.0.0.1:0 --lease-ms "$LEASE_MS" > "$WORK/coordinator.log" 2>&1 &
COORD_PID=$!
wait_for_line "$WORK/coordinator.log" "listening on 127.0.0.1:" 120
ADDR=$(sed -n 's/.*listening on \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$WORK/coordinator.log" | head -n 1)
PGPORT=$(sed -n 4p "$WORK/data/pg/postmaster.pid")
PGPASSWORD=$(cat "$WORK/data/password")
token() { "$BIN/services/dualswarm-coordinator" token create --role "$1" --name "bench-$1" --data-dir "$WORK/data"; }
ADMIN_TOKEN=$(token admin)
WORKER_TOKEN=$(token worker)
SUBMITTER_TOKEN=$(token submitter)
export DUALSWARM_ADDR="$ADDR" DUALSWARM_TOKEN="$SUBMITTER_TOKEN"
export DS="$BIN/dualswarm" WORK RUN_TIMEOUT PGPORT PGPASSWORD JOBS STEPS
export HARD_TARGET="webdav-m$MUTANT" OK_TARGET=webdav-m0 OVERHEAD_SLOTS=4
export OK_LAUNCH="$BIN/tests/suts/ds-ref-webdav --port {port} --dir {dir} --mutant 0"
for m in 0 "$MUTANT"; do
  DUALSWARM_TOKEN="$ADMIN_TOKEN" "$DS" target add "webdav-m$m" --adapter http --ready http:/ \
    --launch "$BIN/tests/suts/ds-ref-webdav --port {port} --dir {dir} --mutant $m" >/dev/null
done
"$DS" spec push specs/http_webdav.dspec >/dev/null
log "coordinator on $ADDR (PostgreSQL port $PGPORT)"

# ------------------------------------------------ 1. time to first finding
load_hard_before=$(cut -d' ' -f1-3 /proc/loadavg)
hard_start=$SECONDS
skipped=""
if [ "$CALIB_REPS" -gt 0 ]; then
  log "calibration: whole runs of mutant $MUTANT, 2 workers x 2 slots, shrinking off"
  start_workers calib 2 2 --shrink-reruns 0
  for ((rep = 1; rep <= CALIB_REPS; rep++)); do helper calib $((SEED_BASE + rep)); done
  stop_workers
fi
for config in $CONFIGS; do
  shape=${config%%-*}
  workers=${shape%x*}
  slots=${shape#*x}
  flags=()
  [[ $config == *-noshrink ]] && flags=(--shrink-reruns 0)
  log "hard mutant $MUTANT, $config: $workers worker(s) x $slots slot(s) ${flags[*]:-}"
  start_workers "$config" "$workers" "$slots" "${flags[@]}"
  for ((rep = 1; rep <= REPS; rep++)); do
    if [ $((SECONDS - hard_start)) -ge "$HARD_BUDGET" ]; then
      log "the hard-mutant budget of $HARD_BUDGET s is spent: skipping $config rep $rep"
      skipped+=" $config#$rep"
      continue
    fi
    helper hard "$config" "$rep" $((SEED_BASE + rep))
  done
  stop_workers
done
hard_secs=$((SECONDS - hard_start))
load_hard_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------ 2. overhead per job
load_over_before=$(cut -d' ' -f1-3 /proc/loadavg)
over_start=$SECONDS
log "overhead: $OVERHEAD_JOBS-job runs and 1-job runs, --steps 1, correct server, 2 workers x 2 slots"
start_workers overhead 2 2
for ((rep = 1; rep <= OVERHEAD_REPS; rep++)); do helper overhead overhead-many "$OVERHEAD_JOBS" "$rep"; done
for ((rep = 1; rep <= LATENCY_REPS; rep++)); do helper overhead overhead-single 1 "$rep"; done
stop_workers
helper localref 5
over_secs=$((SECONDS - over_start))
load_over_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------------------ report
report=$(helper report)
stop_all
left=$(pgrep -af -- "$WORK" || true)
if [ -n "$left" ]; then leak_note="**processes were left behind** under the temp dir: $(echo "$left" | wc -l)"; else leak_note="none left behind (\`pgrep -f\` of the temp dir after shutdown)"; fi
total_secs=$((SECONDS - bench_start))
section="## Swarm scaling

Command: \`BUILD_DIR=$BUILD_DIR${NOTES_FILE:+ NOTES_FILE=...} bash bench/run_swarm_bench.sh\` (MUTANT=$MUTANT STEPS=$STEPS JOBS=$JOBS REPS=$REPS CONFIGS=\"$CONFIGS\" CALIB_REPS=$CALIB_REPS OVERHEAD_JOBS=$OVERHEAD_JOBS OVERHEAD_REPS=$OVERHEAD_REPS LATENCY_REPS=$LATENCY_REPS RUN_TIMEOUT=$RUN_TIMEOUT LEASE_MS=$LEASE_MS; build type $build_type)

* Date: $date; $machine
* Setup: one \`dualswarm-coordinator\` on its embedded PostgreSQL 15 (durable commits, auth on, \`--lease-ms $LEASE_MS\`: workers heartbeat every $((LEASE_MS / 3)) ms), \`dualswarm-worker\` daemons started fresh per configuration, the \`dualswarm\` CLI; everything on 127.0.0.1 on the same 2 cores, which other engineers' builds and tests shared during the run.
* Load average (1/5/15 min): at the start $load_start; hard-mutant runs before / after $load_hard_before / $load_hard_after; overhead runs before / after $load_over_before / $load_over_after.
* Wall time: hard-mutant runs ${hard_secs} s${skipped:+ (budget of $HARD_BUDGET s spent; skipped:$skipped)}, overhead runs ${over_secs} s, whole script ${total_secs} s. Processes: $leak_note.

### Time to the first finding of a hard mutant

ds-ref-webdav mutant $MUTANT (the ETag is derived from the body length: only an equal-length replacement shows it), \`dualswarm run submit --jobs $JOBS --steps $STEPS --seed S --stop-at-first-finding\` (other budget flags at the coordinator's defaults: 4 connections, 4 in flight, 5000 ms response timeout), seeds S = $((SEED_BASE + 1))..$((SEED_BASE + REPS)) for every configuration (a run's jobs derive their seeds, branch orders and feature masks from S, so the configurations run the same $JOBS jobs; which of them run before the first report differs). Parameters: a per-job budget of $STEPS steps, small enough that a single job usually does not find the bug (measured below by the calibration runs), so the swarm's parallelism and its jobs' distinct seeds, branch orders and feature masks are what find it.

What each column includes:
* *first report*: client submit → the coordinator recorded the first counterexample (its \`created_at\`, the finding's first report): leasing, running jobs until one detects the bug, that job's **shrinking** (against fresh SUTs, unless off) and 5 verification replays of the result, and its CompleteJob. The run stops there (\`--stop-at-first-finding\`).
* *finding seen by the client*: when \`dualswarm run watch --json\` showed a failed job (the coordinator's Watch polls every 250 ms).
* *run end*: the run's \`finished_at\`; with \`--stop-at-first-finding\` the same transaction as the first report, unless no job found the bug (then all $JOBS jobs ran).
* *workers idle*: every worker slot idle again (workers' \`dualswarm_worker_slots_busy\`, polled every 50 ms): jobs still running when the run stopped learn it at their next heartbeat and are stopped; this is when the swarm really stops working.
* *shrinking off*: workers with \`--shrink-reruns 0\`: detection + 5 verification replays of the unshrunk input + report: close to pure detection time when checking the failing trace is cheap (not always: see the observations).
* *other jobs running for ≥ 1 s at the first report*: jobs leased at least 1 s before the first report and not completed before it (passing jobs take about 0.1–0.4 s): in practice jobs shrinking a detection of their own, or checking a trace whose rejection is expensive.
* *first finder: job s*: the failing job's own wall time in its process (test + shrinking + replays).

$report"
if [ -n "${NOTES_FILE:-}" ]; then section+="

$(cat "$NOTES_FILE")"; fi

if [ "$WRITE_RESULTS" = 1 ]; then bench_replace_section "Swarm scaling" "$section"; fi
echo "$section"
