// The job queue: leases (LeaseJobs, fair share between runs), heartbeats
// that extend them, leases given back unused, completions (a fast path
// under the job's lock alone, the slow path under its run's), and expired
// leases put back in the queue. store.h describes the guarantees.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/store/checks.h"
#include "services/coordinator/store/findings.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/runs.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {
namespace {

absl::Status CheckLeaseMs(int64_t lease_ms) {
  if (lease_ms < kMinLeaseMs || lease_ms > kMaxLeaseMs)
    return absl::InvalidArgumentError("lease length must be between 100 ms and one day");
  return absl::OkStatus();
}

// ---- leasing ----
//
// Candidates: queued jobs and jobs whose lease expired, oldest first,
// skipping rows another lessee holds. Each gets a fresh token; the lease is
// recorded as an attempt; a queued run becomes running (unless its row is
// busy: then the next completion or refresh does it).
//
// Fair share: runs that can use this worker (adapter, labels) are served
// fewest-leased-jobs first, so two runs at once split the slots instead of
// the older one taking them all; within a run, jobs go in id order. Each
// run's candidates come from jobs_leasable_by_run in (run_id, id) order,
// stopping at the first unlocked match (no sort of a big run's jobs);
// `active` is small (runs queued or running).
//
// Parameters of the lease statements: $1 worker id, $2 max jobs, $3
// adapters, $4 labels (comma-joined), $5 max attempts, $6 lease length (ms).

// Leases the candidates (`cand`, from the statements below) and reads them
// with their runs.
const std::string kLeaseTailSql = absl::StrCat(
    " leased AS ("
    "  UPDATE jobs j SET state = 'leased', lease_token = gen_random_uuid()::text,"
    "    lease_expires_at = now() + $6::float8 * interval '1 millisecond',"
    "    worker_id = NULLIF($1, ''), attempts = j.attempts + 1, updated_at = now()"
    "  FROM cand WHERE j.id = cand.id"
    "  RETURNING j.*),"
    " attempt AS ("
    "  INSERT INTO job_attempts (job_id, attempt, lease_token, worker_id)"
    "  SELECT id, attempts, lease_token, worker_id FROM leased),"
    " started AS ("
    "  UPDATE runs SET state = 'running', started_at = now()"
    "  WHERE id IN (SELECT id FROM runs WHERE state = 'queued'"
    "               AND id IN (SELECT run_id FROM leased) FOR UPDATE SKIP LOCKED))"
    " SELECT ",
    LeasedJobColumns().list(), " FROM leased j JOIN runs r ON r.id = j.run_id ORDER BY j.id");

// Several usable runs: fair share (above).
const std::string kLeaseFairSql = absl::StrCat(
    "WITH usable AS ("
    "  SELECT r.id FROM runs r JOIN targets t ON t.id = r.target_id"
    "  WHERE r.state IN ('queued', 'running')"
    "    AND ($3 = '' OR t.adapter = ANY (string_to_array($3, ',')))"
    "    AND t.labels <@ string_to_array($4, ',')),"
    // Counting a run's leased jobs walks every lease of the run not
    // yet vacuumed (~5 ms per lease in a 30k-job run: lease_bench),
    // which is why this query runs only when there is a choice.
    " active AS ("
    "  SELECT u.id,"
    "    (SELECT count(*) FROM jobs x WHERE x.run_id = u.id AND x.state = 'leased') AS busy"
    "  FROM usable u),"
    " cand AS ("
    "  SELECT c.id FROM active a CROSS JOIN LATERAL ("
    "    SELECT j.id FROM jobs j"
    "    WHERE j.run_id = a.id AND j.state IN ('queued', 'leased')"
    "      AND (j.state = 'queued' OR (j.lease_expires_at < now() AND j.attempts < $5))"
    "    ORDER BY j.id LIMIT $2"
    "    FOR UPDATE OF j SKIP LOCKED) c"
    "  ORDER BY a.busy, a.id, c.id LIMIT $2),",
    kLeaseTailSql);

// One usable run (the common case): walk jobs_leasable in id order and stop
// at the first match; the run/target test is a scalar subquery per
// candidate (a join lets the planner fetch all of a run's jobs and sort
// them, ~10 ms for 30k jobs, as it does right after a big Submit).
const std::string kLeaseOneRunSql = absl::StrCat(
    "WITH cand AS ("
    "  SELECT j.id FROM jobs j"
    "  WHERE j.state IN ('queued', 'leased')"
    "    AND (j.state = 'queued' OR (j.lease_expires_at < now() AND j.attempts < $5))"
    "    AND (SELECT ($3 = '' OR t.adapter = ANY (string_to_array($3, ',')))"
    "                AND t.labels <@ string_to_array($4, ',')"
    "         FROM runs r JOIN targets t ON t.id = r.target_id WHERE r.id = j.run_id)"
    "  ORDER BY j.id LIMIT $2"
    "  FOR UPDATE OF j SKIP LOCKED),",
    kLeaseTailSql);

// How many runs (0, 1, or 2 for "several") this worker could take jobs of.
// Counting first costs one cheap statement; the fair query's per-run scans
// are slower under concurrent lessees (lease_bench), so one run takes the
// plain path.
int64_t CountUsableRuns(Sql& w, const std::string& adapters, const std::string& labels) {
  static const std::string sql =
      "SELECT count(*) AS n FROM (SELECT 1 FROM runs r JOIN targets t ON t.id = r.target_id"
      " WHERE r.state IN ('queued', 'running')"
      "   AND ($1 = '' OR t.adapter = ANY (string_to_array($1, ',')))"
      "   AND t.labels <@ string_to_array($2, ',') LIMIT 2) x";
  return w.exec_prepared("lease_usable_runs", sql, adapters, labels)[0]["n"].as<int64_t>();
}

std::vector<LeasedJob> LeaseIn(Sql& w, const LeaseRequest& req, int max_attempts) {
  std::string adapters = absl::StrJoin(req.adapters, ",");
  std::string labels = absl::StrJoin(req.labels, ",");
  int64_t usable = CountUsableRuns(w, adapters, labels);
  if (usable == 0) return {};
  const bool fair_share = usable > 1;
  pqxx::result r = w.exec_prepared(fair_share ? "lease_jobs_fair" : "lease_jobs_one_run",
                                   fair_share ? kLeaseFairSql : kLeaseOneRunSql, req.worker_id, req.max_jobs, adapters,
                                   labels, max_attempts, req.lease_ms);
  std::vector<LeasedJob> out;
  out.reserve(r.size());
  for (const auto& row : r) out.push_back(LeasedJobColumns().Read(row));
  return out;
}

// ---- completing ----

// The state a job's outcome leaves it in (unless it was cancelled meanwhile):
// an inconclusive job counts as passed.
v1::JobState JobStateAfter(v1::JobOutcome outcome) {
  if (outcome == v1::JOB_OUTCOME_FAILED) return v1::JOB_STATE_FAILED;
  if (outcome == v1::JOB_OUTCOME_ERROR) return v1::JOB_STATE_ERROR;
  return v1::JOB_STATE_PASSED;
}

absl::Status CheckCompletion(const Completion& c) {
  if (!wire::IsKnown(c.outcome))
    return absl::InvalidArgumentError(absl::StrCat("unknown outcome \"", wire::EnumWord(c.outcome),
                                                   "\" (known: ", wire::EnumChoices<v1::JobOutcome>(", "), ")"));
  if (c.lease_token.empty() || c.lease_token.size() > kMaxLeaseTokenBytes)
    return absl::InvalidArgumentError("a completion needs its lease token");
  if (c.worker_id.size() > kMaxNameBytes) return absl::InvalidArgumentError("worker_id too long");
  RETURN_IF_ERROR(CheckText("lease_token", c.lease_token, true));
  RETURN_IF_ERROR(CheckText("worker_id", c.worker_id, true));
  return absl::OkStatus();
}

// Why a completion's covered branches cannot be kept ("" when they can).
std::string CoverageProblem(const std::vector<int32_t>& ids) {
  if (ids.size() > kMaxCoveredBranches)
    return absl::StrCat("covered_branches has ", ids.size(), " ids, more than ", kMaxCoveredBranches);
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= kMaxBranchId || (i > 0 && ids[i] <= ids[i - 1]))
      return absl::StrCat("covered_branches must be strictly increasing ids in [0, ", kMaxBranchId, "); got ", ids[i],
                          " at position ", i);
  return "";
}

// A completion's covered branches as a PostgreSQL array literal.
std::string BranchIds(const std::vector<int32_t>& ids) {
  return Int64Array(std::vector<int64_t>(ids.begin(), ids.end()));
}

absl::Status NeverLeased(int64_t job_id) {
  return absl::FailedPreconditionError(absl::StrCat("job ", job_id, " was never leased with this token"));
}
absl::Status StaleLease(int64_t job_id) {
  return absl::FailedPreconditionError(
      absl::StrCat("stale lease: job ", job_id, " was leased again after this lease expired"));
}

// The fast path: a completion that cannot end its run (another job of the
// run is still queued) and cannot stop it (not a finding) needs only its
// own job's row lock, so completions of one run proceed in parallel. The
// queued job is evidence enough: whoever completes the run's last job sees
// no queued job and takes the slow path, whose RefreshRun waits for every
// completion still in flight. The evidence is read with a lock clause (FOR
// KEY SHARE SKIP LOCKED), so it is the job's current version, not the
// statement's snapshot, which may predate a concurrent lease and completion
// of that very job; SKIP LOCKED never waits, so the fast path cannot
// deadlock with a slow path that waits for it. Any queued job will do, so
// each completion looks past its own id by (id mod 32): concurrent
// completions then lock different rows instead of all share-locking the
// first queued one, which made PostgreSQL build a MultiXact per lock
// (completion statement 0.51 -> 0.17 ms with 16 lessees, lease_bench).
//
// One statement (autocommit): lock the job, find its lease, and record the
// completion only if the fast path applies; otherwise change nothing and
// say why. nullopt: the slow path decides.
absl::StatusOr<std::optional<CompletionResult>> CompleteFast(Sql& w, const Completion& c, const std::string& reason) {
  static const std::string sql =
      "WITH j AS ("
      "  SELECT j.id, j.state, COALESCE(j.lease_token, '') AS token, a.id AS att,"
      "    a.completed_at IS NOT NULL AS done, r.state AS run_state,"
      "    EXISTS (SELECT 1 FROM jobs o WHERE o.run_id = j.run_id AND o.state = 'queued'"
      "            AND o.id > j.id + j.id % 32 LIMIT 1 FOR KEY SHARE SKIP LOCKED) AS others"
      "  FROM jobs j JOIN runs r ON r.id = j.run_id"
      "  LEFT JOIN job_attempts a ON a.lease_token = $2 AND a.job_id = j.id"
      "  WHERE j.id = $1 FOR UPDATE OF j),"
      " ok AS (SELECT id, att FROM j WHERE att IS NOT NULL AND NOT done AND token = $2"
      "        AND state = 'leased' AND run_state = 'running' AND others),"
      " att AS ("
      "  UPDATE job_attempts SET completed_at = now(), outcome = $4, seconds = $6, sent = $7,"
      "    received = $8, faults = $10, worker_id = COALESCE(NULLIF($9, ''), worker_id)"
      "  WHERE id = (SELECT att FROM ok)),"
      " upd AS ("
      "  UPDATE jobs SET state = $3, outcome = $4, reason = $5, updated_at = now(), faults = $10,"
      "    worker_id = COALESCE(NULLIF($9, ''), worker_id), covered_branches = $11::integer[]"
      "  WHERE id = (SELECT id FROM ok) RETURNING id)"
      " SELECT j.att IS NULL AS never_leased, j.done AS done, j.token AS token,"
      "   (SELECT count(*) FROM upd) AS completed FROM j";
  pqxx::result jr =
      w.exec_prepared("complete_fast", sql, c.job_id, c.lease_token, wire::EnumWord(JobStateAfter(c.outcome)),
                      wire::EnumWord(c.outcome), reason, c.seconds, static_cast<int64_t>(c.sent),
                      static_cast<int64_t>(c.received), c.worker_id, c.faults, BranchIds(c.covered_branches));
  if (jr.empty()) return absl::NotFoundError(absl::StrCat("no job ", c.job_id));
  const pqxx::row& job = jr[0];
  CompletionResult out;
  if (I64(job["completed"]) == 1) return std::optional<CompletionResult>(out);
  if (job["never_leased"].as<bool>()) return NeverLeased(c.job_id);
  if (job["done"].as<bool>()) {
    out.duplicate = true;
    return std::optional<CompletionResult>(out);
  }
  if (Str(job["token"]) != c.lease_token) return StaleLease(c.job_id);
  return std::optional<CompletionResult>();
}

// The run of job `job_id`, locked (lock order everywhere: the run, then its
// jobs); NOT_FOUND for an unknown job.
struct LockedRun {
  int64_t id = 0;
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  std::string spec_hash;
  int64_t target_id = 0;
};
absl::StatusOr<LockedRun> LockRunOfJob(Sql& w, int64_t job_id) {
  pqxx::result rr = w.exec_params(
      "SELECT id, state, spec_hash, target_id FROM runs"
      " WHERE id = (SELECT run_id FROM jobs WHERE id = $1) FOR UPDATE",
      job_id);
  if (rr.empty()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
  return LockedRun{I64(rr[0]["id"]), Word<v1::RunState>(rr[0]["state"]), Str(rr[0]["spec_hash"]),
                   I64(rr[0]["target_id"])};
}

// The job's lease for a completion, its row locked: the attempt to complete
// and the job's state, or (done) the lease was completed before, or
// FAILED_PRECONDITION for a token never handed out or superseded.
struct HeldLease {
  bool done = false;
  int64_t attempt_id = 0;
  v1::JobState job_state = v1::JOB_STATE_UNSPECIFIED;
};
absl::StatusOr<HeldLease> LockLease(Sql& w, const Completion& c) {
  pqxx::row job = w.exec_params1(
      "SELECT j.state AS state, COALESCE(j.lease_token, '') AS token, a.id AS attempt,"
      " a.completed_at IS NOT NULL AS done"
      " FROM jobs j LEFT JOIN job_attempts a ON a.lease_token = $2 AND a.job_id = j.id"
      " WHERE j.id = $1 FOR UPDATE OF j",
      c.job_id, c.lease_token);
  if (job["attempt"].is_null()) return NeverLeased(c.job_id);
  HeldLease lease;
  lease.done = job["done"].as<bool>();
  if (lease.done) return lease;
  if (Str(job["token"]) != c.lease_token) return StaleLease(c.job_id);
  lease.attempt_id = I64(job["attempt"]);
  lease.job_state = Word<v1::JobState>(job["state"]);
  return lease;
}

// Records the outcome on the job and its attempt. A cancelled job keeps its
// state and reason; it only records the outcome.
void RecordOutcome(Sql& w, const Completion& c, const HeldLease& lease, const std::string& reason) {
  v1::JobState new_state =
      lease.job_state == v1::JOB_STATE_CANCELLED ? v1::JOB_STATE_CANCELLED : JobStateAfter(c.outcome);
  w.exec_params0(
      "WITH att AS ("
      "  UPDATE job_attempts SET completed_at = now(), outcome = $3, seconds = $5, sent = $6,"
      "    received = $7, faults = $10, worker_id = COALESCE(NULLIF($9, ''), worker_id) WHERE id = $8)"
      " UPDATE jobs SET state = $2, outcome = $3, faults = $10,"
      "   reason = CASE WHEN state = 'cancelled' THEN reason ELSE $4 END, updated_at = now(),"
      "   worker_id = COALESCE(NULLIF($9, ''), worker_id), covered_branches = $11::integer[]"
      " WHERE id = $1",
      c.job_id, wire::EnumWord(new_state), wire::EnumWord(c.outcome), reason, c.seconds, static_cast<int64_t>(c.sent),
      static_cast<int64_t>(c.received), lease.attempt_id, c.worker_id, c.faults, BranchIds(c.covered_branches));
}

// The slow path: findings, a run's last jobs, cancelled jobs and runs not
// yet running, under the run's lock.
absl::StatusOr<CompletionResult> CompleteSlow(Sql& w, const Completion& c, const std::string& reason,
                                              const NewCounterexample& cx) {
  CompletionResult out;
  ASSIGN_OR_RETURN(LockedRun run, LockRunOfJob(w, c.job_id));
  out.run_id = run.id;
  ASSIGN_OR_RETURN(HeldLease lease, LockLease(w, c));
  if (lease.done) {
    out.duplicate = true;
    return out;
  }
  if (lease.job_state == v1::JOB_STATE_CANCELLED) out.run_stopped = true;
  RecordOutcome(w, c, lease, reason);
  if (c.outcome == v1::JOB_OUTCOME_FAILED)
    RecordCounterexample(w, FoundIn{run.id, c.job_id, c.lease_token, run.spec_hash, run.target_id}, cx);
  if (!RunIsOpen(run.state)) out.run_stopped = true;
  RefreshRun(w, run.id);
  return out;
}

}  // namespace

absl::StatusOr<std::vector<LeasedJob>> Store::LeaseJobs(const LeaseRequest& req) {
  if (req.max_jobs < 1 || req.max_jobs > kMaxLeaseBatch)
    return absl::InvalidArgumentError(
        absl::StrCat("max_jobs must be between 1 and ", kMaxLeaseBatch, ", got ", req.max_jobs));
  RETURN_IF_ERROR(CheckLeaseMs(req.lease_ms));
  RETURN_IF_ERROR(CheckList("adapter", req.adapters));
  RETURN_IF_ERROR(CheckList("label", req.labels));
  // One statement that changes anything: autocommit (see RunSingle).
  return RunSingle<std::vector<LeasedJob>>("leasing jobs", [&](Sql& w) -> absl::StatusOr<std::vector<LeasedJob>> {
    return LeaseIn(w, req, options_.max_attempts);
  });
}

absl::StatusOr<HeartbeatResult> Store::Heartbeat(const std::string& worker_id, const std::vector<HeartbeatJob>& jobs,
                                                 int64_t lease_ms) {
  RETURN_IF_ERROR(CheckLeaseMs(lease_ms));
  if (jobs.size() > kMaxHeartbeatJobs) return absl::InvalidArgumentError("too many jobs in one heartbeat");
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;
  for (const auto& j : jobs) {
    if (j.lease_token.size() > kMaxLeaseTokenBytes) return absl::InvalidArgumentError("bad lease token");
    ids.push_back(j.job_id);
    tokens.push_back(j.lease_token);
  }
  return Run<HeartbeatResult>("heartbeat", [&](Sql& w) -> absl::StatusOr<HeartbeatResult> {
    HeartbeatResult out;
    if (!worker_id.empty()) w.exec_params0("UPDATE workers SET last_heartbeat_at = now() WHERE id = $1", worker_id);
    if (ids.empty()) return out;
    pqxx::result r = w.exec_params(
        "WITH h AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS h(id, token)),"
        " ext AS ("
        "  UPDATE jobs j SET lease_expires_at = now() + $3::float8 * interval '1 millisecond',"
        "    worker_id = COALESCE(NULLIF($4, ''), j.worker_id), updated_at = now()"
        "  FROM h WHERE j.id = h.id AND j.lease_token = h.token AND j.state = 'leased'"
        "  RETURNING j.id, j.lease_token),"
        " holder AS ("
        "  UPDATE job_attempts a SET worker_id = $4 FROM ext"
        "  WHERE $4 <> '' AND a.job_id = ext.id AND a.lease_token = ext.lease_token"
        "    AND a.worker_id IS DISTINCT FROM $4)"
        " SELECT h.id AS id,"
        "   CASE WHEN h.id IN (SELECT id FROM ext) THEN 'extended'"
        "        WHEN j.state = 'cancelled' AND j.lease_token = h.token THEN 'cancel'"
        "        ELSE 'lost' END AS what,"
        "   ds_us(now() + $3::float8 * interval '1 millisecond') AS extended_until"
        " FROM h LEFT JOIN jobs j ON j.id = h.id",
        Int64Array(ids), TextArray(tokens), lease_ms, worker_id);
    for (const auto& row : r) {
      std::string what = Str(row["what"]);
      int64_t id = I64(row["id"]);
      (what == "extended" ? out.extended : what == "cancel" ? out.cancel : out.lost).push_back(id);
      out.extended_until = I64(row["extended_until"]);
    }
    return out;
  });
}

absl::StatusOr<int> Store::ReturnLeases(const std::vector<HeartbeatJob>& leases) {
  if (leases.empty()) return 0;
  std::vector<int64_t> ids;
  std::vector<std::string> tokens;
  for (const auto& l : leases) {
    ids.push_back(l.job_id);
    tokens.push_back(l.lease_token);
  }
  // One statement (autocommit): a lease that was completed, cancelled or
  // superseded meanwhile is not 'leased' with this token and stays as it is.
  return RunSingle<int>("returning unused leases", [&](Sql& w) -> absl::StatusOr<int> {
    pqxx::result r =
        w.exec_prepared("return_leases",
                        "WITH h AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS h(id, token)),"
                        " back AS ("
                        "  UPDATE jobs j SET state = 'queued', lease_token = NULL, lease_expires_at = NULL,"
                        "    worker_id = NULL, attempts = j.attempts - 1, updated_at = now()"
                        "  FROM h WHERE j.id = h.id AND j.lease_token = h.token AND j.state = 'leased'"
                        "  RETURNING j.id, h.token),"
                        " gone AS ("
                        "  DELETE FROM job_attempts a USING back"
                        "  WHERE a.job_id = back.id AND a.lease_token = back.token AND a.completed_at IS NULL)"
                        " SELECT count(*) AS n FROM back",
                        Int64Array(ids), TextArray(tokens));
    return static_cast<int>(I64(r[0]["n"]));
  });
}

absl::StatusOr<CompletionResult> Store::CompleteJob(const Completion& given) {
  RETURN_IF_ERROR(CheckCompletion(given));
  // A malformed coverage list is dropped, not the report with it.
  const std::string coverage_problem = CoverageProblem(given.covered_branches);
  Completion dropped;
  if (!coverage_problem.empty()) {
    dropped = given;
    dropped.covered_branches.clear();
  }
  const Completion& c = coverage_problem.empty() ? given : dropped;
  const std::string reason = ScrubText(c.reason);
  NewCounterexample cx;
  std::optional<CompletionResult> fast;
  if (c.outcome == v1::JOB_OUTCOME_FAILED) {
    ASSIGN_OR_RETURN(cx, CheckCounterexample(c));
  } else {
    ASSIGN_OR_RETURN(fast, RunSingle<std::optional<CompletionResult>>(
                               "completing a job", [&](Sql& w) { return CompleteFast(w, c, reason); }));
  }
  CompletionResult out;
  if (fast.has_value()) {
    out = *fast;
  } else {
    ASSIGN_OR_RETURN(out,
                     Run<CompletionResult>("completing a job", [&](Sql& w) { return CompleteSlow(w, c, reason, cx); }));
  }
  out.coverage_refused = coverage_problem;
  return out;
}

absl::StatusOr<int> Store::RequeueExpiredLeases() {
  return Run<int>("re-queueing expired leases", [&](Sql& w) -> absl::StatusOr<int> {
    pqxx::result runs = w.exec(
        "SELECT DISTINCT run_id FROM jobs WHERE state = 'leased' AND lease_expires_at < now()"
        " ORDER BY run_id");
    int changed = 0;
    for (const auto& rr : runs) {
      int64_t run_id = I64(rr["run_id"]);
      // Lock order: the run, then its jobs.
      w.exec_params("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", run_id);
      pqxx::result r = w.exec_params(
          "UPDATE jobs SET state = CASE WHEN attempts >= $2 THEN 'error' ELSE 'queued' END,"
          "  reason = CASE WHEN attempts >= $2"
          "    THEN 'lease expired ' || attempts || ' times (worker lost?)' ELSE reason END,"
          "  updated_at = now()"
          " WHERE run_id = $1 AND state = 'leased' AND lease_expires_at < now() RETURNING id",
          run_id, options_.max_attempts);
      changed += static_cast<int>(r.size());
      RefreshRun(w, run_id);
    }
    return changed;
  });
}

}  // namespace dualswarm::coord
