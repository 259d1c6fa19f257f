// Runs: submitting one with its swarm of jobs, reading, listing and
// cancelling runs, listing their jobs, and a run's state as its jobs end.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/store/checks.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/runs.h"
#include "services/coordinator/store/swarm.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {
namespace {

RunRow RunById(Sql& w, int64_t id) {
  return RunColumns().Read(w.exec_params1(RunColumns().Select(absl::StrCat(kRunFrom, "WHERE r.id = $1")), id));
}

// The state a run ends in once no job is open, with its error.
void FinishRun(Sql& w, int64_t run_id, bool failed) {
  int64_t errors =
      w.exec_params1("SELECT count(*) FROM jobs WHERE run_id = $1 AND state = 'error'", run_id)[0].as<int64_t>();
  v1::RunState final_state = failed ? v1::RUN_STATE_FAILED : errors > 0 ? v1::RUN_STATE_ERROR : v1::RUN_STATE_PASSED;
  std::string error = final_state == v1::RUN_STATE_ERROR ? absl::StrCat(errors, " job(s) could not run") : "";
  w.exec_params0(
      "UPDATE runs SET state = $2, error = $3, started_at = COALESCE(started_at, now()),"
      " finished_at = now() WHERE id = $1",
      run_id, wire::EnumWord(final_state), error);
}

}  // namespace

bool RunIsOpen(v1::RunState s) { return s == v1::RUN_STATE_QUEUED || s == v1::RUN_STATE_RUNNING; }

uint64_t RandomSeed() {
  std::random_device rd;
  uint64_t seed = (uint64_t{rd()} << 32) ^ rd();
  return seed == 0 ? 1 : seed;
}

absl::Status CheckGen(Sql& w, const std::string& spec_hash, const std::string& gen) {
  pqxx::result r = w.exec_params(
      "SELECT name, gens IS NULL OR $2 = ANY(gens) AS ok,"
      " COALESCE(array_to_string(gens, ', '), '') AS gens"
      " FROM specs WHERE hash = $1",
      spec_hash, gen);
  if (r.empty()) return absl::NotFoundError(absl::StrCat("no spec version \"", spec_hash, "\""));
  if (r[0]["ok"].as<bool>()) return absl::OkStatus();
  std::string names = Str(r[0]["gens"]);
  return absl::InvalidArgumentError(absl::StrCat(
      "spec \"", Str(r[0]["name"]), "\" (version ", spec_hash.substr(0, 12), ") has no gen block \"", gen, "\"; ",
      names.empty() ? "it has no gen blocks at all, so no job could generate requests"
                    : absl::StrCat("its gen blocks: ", names)));
}

absl::Status CheckTargetExists(Sql& w, int64_t id) {
  pqxx::result r = w.exec_params("SELECT adapter FROM targets WHERE id = $1", id);
  if (r.empty()) return absl::NotFoundError(absl::StrCat("no target ", id));
  if (Str(r[0]["adapter"]) == kExploreTarget)
    return absl::InvalidArgumentError(absl::StrCat("target \"", kExploreTarget,
                                                   "\" is the built-in one of explore runs; to model-check the spec "
                                                   "give budget.explore_depth (run submit --explore-depth N)"));
  return absl::OkStatus();
}

// An intermediary's spec runs only on a target whose SUT is told the
// tester's origin ports, and only it does (specs stored before the schema
// knew their role are not checked: the job reports the mismatch).
absl::Status CheckOriginRole(Sql& w, const std::string& spec_hash, int64_t target_id) {
  pqxx::result r = w.exec_params(
      "SELECT s.name, s.origin_role, t.name AS target, t.origins FROM specs s, targets t"
      " WHERE s.hash = $1 AND t.id = $2 AND s.origin_role IS NOT NULL",
      spec_hash, target_id);
  if (r.empty()) return absl::OkStatus();
  const bool intermediary = r[0]["origin_role"].as<bool>();
  const int64_t origins = I64(r[0]["origins"]);
  if (intermediary && origins == 0)
    return absl::InvalidArgumentError(absl::StrCat(
        "spec \"", Str(r[0]["name"]), "\" has an origin role (an intermediary), but target \"", Str(r[0]["target"]),
        "\" has no origins: register one whose launch names {origin_port} (target add --origins N)"));
  if (!intermediary && origins > 0)
    return absl::InvalidArgumentError(absl::StrCat("target \"", Str(r[0]["target"]), "\" plays ", origins,
                                                   " origin server(s), but spec \"", Str(r[0]["name"]),
                                                   "\" has no origin role"));
  return absl::OkStatus();
}

absl::Status CheckExplorable(Sql& w, const std::string& spec_hash) {
  pqxx::result r = w.exec_params("SELECT name, origin_role FROM specs WHERE hash = $1", spec_hash);
  if (!r.empty() && !r[0]["origin_role"].is_null() && r[0]["origin_role"].as<bool>())
    return absl::InvalidArgumentError(absl::StrCat(
        "spec \"", Str(r[0]["name"]),
        "\" has an origin role (an intermediary): explore does not model an origin's side, so it cannot be explored"));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ExploreTargetFor(Sql& w, int64_t requested) {
  w.exec_params0(
      "INSERT INTO targets (name, adapter, reset_policy) VALUES ($1, $1, 'none')"
      " ON CONFLICT (name) DO NOTHING",
      std::string(kExploreTarget));
  pqxx::result r = w.exec_params("SELECT id, adapter FROM targets WHERE name = $1", std::string(kExploreTarget));
  if (r.empty() || Str(r[0]["adapter"]) != kExploreTarget)
    return absl::FailedPreconditionError(
        absl::StrCat("the target named \"", kExploreTarget, "\" is not the built-in one explore runs need"));
  const int64_t id = I64(r[0]["id"]);
  if (requested != 0 && requested != id)
    return absl::InvalidArgumentError(
        absl::StrCat("an explore run (budget.explore_depth > 0) model-checks the spec and tests no target: leave "
                     "target_id 0 (or name the built-in target \"",
                     kExploreTarget, "\", id ", id, ")"));
  return id;
}

absl::StatusOr<RunRow> InsertRun(Sql& w, const RunTemplate& t, const std::string& submitted_by, int64_t campaign_id) {
  pqxx::result spec = w.exec_params("SELECT choice_sites FROM specs WHERE hash = $1", t.spec_hash);
  if (spec.empty()) return absl::NotFoundError(absl::StrCat("no spec version \"", t.spec_hash, "\""));
  int sites = static_cast<int>(I64(spec[0]["choice_sites"]));
  RETURN_IF_ERROR(CheckGen(w, t.spec_hash, t.gen));
  const bool explore = t.budget.explore_depth > 0;
  int64_t target_id = t.target_id;
  if (explore) {
    ASSIGN_OR_RETURN(target_id, ExploreTargetFor(w, t.target_id));
    RETURN_IF_ERROR(CheckExplorable(w, t.spec_hash));
  } else {
    RETURN_IF_ERROR(CheckTargetExists(w, target_id));
    RETURN_IF_ERROR(CheckOriginRole(w, t.spec_hash, target_id));
  }
  const JobBudget& b = t.budget;
  int64_t id = w.exec_params1(
                    "INSERT INTO runs (spec_hash, target_id, jobs, seed, stop_at_first_finding,"
                    " gen, steps, time_budget_ms, connections, max_in_flight,"
                    " response_timeout_ms, network, max_frontier, submitted_by, campaign_id, guide_candidates,"
                    " explore_depth, explore_max_states)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,"
                    " NULLIF($15::bigint, 0), $16, $17, $18) RETURNING id",
                    t.spec_hash, target_id, t.jobs, static_cast<int64_t>(t.seed), t.stop_at_first_finding, t.gen,
                    static_cast<int64_t>(b.steps), b.time_budget_ms, b.connections, b.max_in_flight,
                    b.response_timeout_ms, b.network, static_cast<int64_t>(b.max_frontier), submitted_by, campaign_id,
                    b.guide_candidates, b.explore_depth, static_cast<int64_t>(b.explore_max_states))[0]
                   .as<int64_t>();
  std::vector<SwarmJob> swarm = ExpandSwarm(t.seed, t.jobs, sites);
  std::vector<int64_t> seeds;
  std::vector<std::string> orders, masks;
  for (const SwarmJob& j : swarm) {
    seeds.push_back(static_cast<int64_t>(j.seed));
    orders.push_back(j.branch_order);
    masks.push_back(j.feature_mask);
  }
  w.exec_params0(
      "INSERT INTO jobs (run_id, idx, seed, branch_order, feature_mask)"
      " SELECT $1::bigint, u.i - 1, u.s, u.b, u.m"
      " FROM unnest($2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS u(s, b, m, i)",
      id, Int64Array(seeds), TextArray(orders), TextArray(masks));
  return RunById(w, id);
}

// The caller holds the run's row lock (SELECT ... FOR UPDATE), so
// run-locked changes (completions on the slow path, cancel, requeue) see
// each other's effects. Completions on the fast path (CompleteJob) change a
// job without the run lock, so "is any job still open?" locks the open job
// it finds (FOR KEY SHARE): a job that a concurrent transaction is
// completing is waited for and then re-checked, so the run's last
// completion always sees every other one. The questions are yes/no ones
// that an index (jobs_by_run_state) answers at once; jobs are counted only
// when the run ends.
void RefreshRun(Sql& w, int64_t run_id) {
  pqxx::row run = w.exec_params1("SELECT state, stop_at_first_finding FROM runs WHERE id = $1", run_id);
  auto state = Word<v1::RunState>(run["state"]);
  bool stop_at_first = run["stop_at_first_finding"].as<bool>();
  if (!RunIsOpen(state)) return;  // final states stay
  bool open = !w.exec_params(
                    "SELECT 1 FROM jobs WHERE run_id = $1 AND state IN ('queued', 'leased')"
                    " LIMIT 1 FOR KEY SHARE",
                    run_id)
                   .empty();
  bool failed = !w.exec_params("SELECT 1 FROM jobs WHERE run_id = $1 AND state = 'failed' LIMIT 1", run_id).empty();
  if (failed && stop_at_first) {
    w.exec_params0(
        "UPDATE jobs SET state = 'cancelled', reason = 'run stopped at its first finding',"
        " updated_at = now() WHERE run_id = $1 AND state IN ('queued', 'leased')",
        run_id);
    w.exec_params0(
        "UPDATE runs SET state = 'failed', started_at = COALESCE(started_at, now()),"
        " finished_at = now() WHERE id = $1",
        run_id);
    return;
  }
  if (!open) return FinishRun(w, run_id, failed);
  if (state == v1::RUN_STATE_QUEUED)
    w.exec_params0(
        "UPDATE runs SET state = 'running', started_at = COALESCE(started_at, now())"
        " WHERE id = $1 AND EXISTS (SELECT 1 FROM jobs WHERE run_id = $1"
        "                           AND state IN ('leased', 'passed', 'failed', 'error'))",
        run_id);
}

absl::StatusOr<RunRow> Store::SubmitRun(const RunTemplate& in, const std::string& submitted_by, int64_t campaign_id) {
  RunTemplate t = in;
  RETURN_IF_ERROR(ValidateTemplate(&t));
  if (t.seed == 0) t.seed = RandomSeed();
  return Run<RunRow>("submitting a run",
                     [&](Sql& w) -> absl::StatusOr<RunRow> { return InsertRun(w, t, submitted_by, campaign_id); });
}

absl::StatusOr<RunRow> Store::GetRun(int64_t id) {
  return ReadRow("reading a run", RunColumns(), absl::StrCat("no run ", id), absl::StrCat(kRunFrom, "WHERE r.id = $1"),
                 id);
}

absl::StatusOr<Listing<RunRow>> Store::ListRuns(const RunFilter& filter, const Page& page) {
  RETURN_IF_ERROR(CheckText("spec_hash", filter.spec_hash, true));
  ASSIGN_OR_RETURN(NumberedPage paging, ParsePage(page));
  return Run<Listing<RunRow>>("listing runs", [&](Sql& w) -> absl::StatusOr<Listing<RunRow>> {
    pqxx::result r =
        w.exec_params(RunColumns().Select(absl::StrCat(
                          kRunFrom,
                          "WHERE ($1 = '' OR r.state = $1) AND ($2 = '' OR r.spec_hash = $2)"
                          " AND ($3::bigint = 0 OR r.target_id = $3::bigint) AND ($4::bigint = 0 OR r.id < $4::bigint)"
                          " ORDER BY r.id DESC LIMIT $5")),
                      wire::EnumWord(filter.state), filter.spec_hash, filter.target_id, paging.after, paging.size + 1);
    return ReadPage<RunRow>(r, paging.size, RunColumns().reader(),
                            [](const RunRow& last, const pqxx::row&) { return std::to_string(last.id); });
  });
}

absl::StatusOr<RunRow> Store::CancelRun(int64_t id) {
  return Run<RunRow>("cancelling a run", [&](Sql& w) -> absl::StatusOr<RunRow> {
    // Lock order everywhere: the run, then its jobs.
    pqxx::result run = w.exec_params("SELECT state FROM runs WHERE id = $1 FOR UPDATE", id);
    if (run.empty()) return absl::NotFoundError(absl::StrCat("no run ", id));
    if (RunIsOpen(Word<v1::RunState>(run[0]["state"]))) {
      w.exec_params0(
          "UPDATE jobs SET state = 'cancelled', reason = 'run cancelled', updated_at = now()"
          " WHERE run_id = $1 AND state IN ('queued', 'leased')",
          id);
      w.exec_params0("UPDATE runs SET state = 'cancelled', finished_at = now() WHERE id = $1", id);
    }
    return RunById(w, id);
  });
}

absl::StatusOr<std::vector<JobRow>> Store::ListJobs(int64_t run_id) {
  return Run<std::vector<JobRow>>("listing jobs", [&](Sql& w) -> absl::StatusOr<std::vector<JobRow>> {
    pqxx::result r = w.exec_params(JobColumns().Select("FROM jobs j WHERE j.run_id = $1 ORDER BY j.idx"), run_id);
    std::vector<JobRow> out;
    for (const auto& row : r) out.push_back(JobColumns().Read(row));
    return out;
  });
}

absl::StatusOr<Listing<JobRow>> Store::ListRunJobs(int64_t run_id, v1::JobState state, const Page& page) {
  // The page token is the first index of the next page (none: 0).
  ASSIGN_OR_RETURN(NumberedPage paging, ParsePage(page));
  return Run<Listing<JobRow>>("listing jobs", [&](Sql& w) -> absl::StatusOr<Listing<JobRow>> {
    if (w.exec_params("SELECT 1 FROM runs WHERE id = $1", run_id).empty())
      return absl::NotFoundError(absl::StrCat("no run ", run_id));
    pqxx::result r = w.exec_params(
        JobDetailColumns().Select("FROM jobs j"
                                  " WHERE j.run_id = $1 AND ($2 = '' OR j.state = $2) AND j.idx >= $3::bigint"
                                  " ORDER BY j.idx LIMIT $4"),
        run_id, wire::EnumWord(state), paging.after, paging.size + 1);
    return ReadPage<JobRow>(r, paging.size, JobDetailColumns().reader(),
                            [](const JobRow& last, const pqxx::row&) { return std::to_string(last.index + 1); });
  });
}

}  // namespace dualswarm::coord
