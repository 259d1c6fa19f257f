#include "services/coordinator/store/rows.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/sql.h"

namespace dualswarm::coord {

// Each reader names the struct's members (designated initializers, in
// declaration order, which the compiler checks) beside the columns they
// come from.

SpecRow ReadSpec(const pqxx::row& r) {
  return {.hash = Str(r["hash"]),
          .name = Str(r["name"]),
          .file_name = Str(r["file_name"]),
          .source = Str(r["source"]),
          .choice_sites = Int(r["choice_sites"]),
          .created_at = I64(r["created_at"])};
}

TargetRow ReadTarget(const pqxx::row& r) {
  return {.id = I64(r["id"]),
          .name = Str(r["name"]),
          .adapter = Str(r["adapter"]),
          .address = Str(r["address"]),
          .launch = Str(r["launch"]),
          .readiness_probe = Str(r["readiness_probe"]),
          .readiness_timeout_ms = Int(r["readiness_timeout_ms"]),
          .reset_policy = Str(r["reset_policy"]),
          .labels = SplitList(Str(r["labels"])),
          .created_at = I64(r["created_at"])};
}

JobBudget ReadBudget(const pqxx::row& r) {
  return {.steps = U64(r["steps"]),
          .time_budget_ms = I64(r["time_budget_ms"]),
          .connections = Int(r["connections"]),
          .max_in_flight = Int(r["max_in_flight"]),
          .response_timeout_ms = I64(r["response_timeout_ms"]),
          .network = Str(r["network"]),
          .max_frontier = U64(r["max_frontier"])};
}

const std::string kRunSelect = absl::StrCat(
    "SELECT r.id AS id, r.spec_hash AS spec_hash, r.target_id AS target_id, r.jobs AS jobs,"
    " r.seed AS seed, r.stop_at_first_finding AS stop_at_first_finding, r.gen AS gen, ",
    kRunBudgetCols,
    ", r.state AS state, r.error AS error, r.submitted_by AS submitted_by,"
    " COALESCE(r.campaign_id, 0) AS campaign_id, ds_us(r.created_at) AS created_at,"
    " ds_us(r.started_at) AS started_at, ds_us(r.finished_at) AS finished_at,"
    " c.n_queued, c.n_leased, c.n_passed, c.n_failed, c.n_error, c.n_cancelled, c.n_total"
    " FROM runs r CROSS JOIN LATERAL ("
    "  SELECT count(*) FILTER (WHERE state = 'queued') AS n_queued,"
    "         count(*) FILTER (WHERE state = 'leased') AS n_leased,"
    "         count(*) FILTER (WHERE state = 'passed') AS n_passed,"
    "         count(*) FILTER (WHERE state = 'failed') AS n_failed,"
    "         count(*) FILTER (WHERE state = 'error') AS n_error,"
    "         count(*) FILTER (WHERE state = 'cancelled') AS n_cancelled,"
    "         count(*) AS n_total"
    "  FROM jobs WHERE run_id = r.id) c ");

RunRow ReadRun(const pqxx::row& r) {
  return {.id = I64(r["id"]),
          .tmpl = {.spec_hash = Str(r["spec_hash"]),
                   .target_id = I64(r["target_id"]),
                   .jobs = Int(r["jobs"]),
                   .seed = U64(r["seed"]),
                   .stop_at_first_finding = Bool(r["stop_at_first_finding"]),
                   .budget = ReadBudget(r),
                   .gen = Str(r["gen"])},
          .state = Word<v1::RunState>(r["state"]),
          .counts = {.queued = Int(r["n_queued"]),
                     .leased = Int(r["n_leased"]),
                     .passed = Int(r["n_passed"]),
                     .failed = Int(r["n_failed"]),
                     .error = Int(r["n_error"]),
                     .cancelled = Int(r["n_cancelled"]),
                     .total = Int(r["n_total"])},
          .error = Str(r["error"]),
          .submitted_by = Str(r["submitted_by"]),
          .campaign_id = I64(r["campaign_id"]),
          .created_at = I64(r["created_at"]),
          .started_at = I64(r["started_at"]),
          .finished_at = I64(r["finished_at"])};
}

JobRow ReadJob(const pqxx::row& r) {
  return {.id = I64(r["id"]),
          .run_id = I64(r["run_id"]),
          .index = Int(r["idx"]),
          .seed = U64(r["seed"]),
          .branch_order = Str(r["branch_order"]),
          .feature_mask = Str(r["feature_mask"]),
          .state = Word<v1::JobState>(r["state"]),
          .lease_token = Str(r["lease_token"]),
          .lease_expires_at = I64(r["lease_expires_at"]),
          .worker_id = Str(r["worker_id"]),
          .attempts = Int(r["attempts"]),
          .outcome = Word<v1::JobOutcome>(r["outcome"]),
          .reason = {},
          .updated_at = 0};  // ReadJobDetail reads these
}

JobRow ReadJobDetail(const pqxx::row& r) {
  JobRow j = ReadJob(r);
  j.reason = Str(r["reason"]);
  j.updated_at = I64(r["updated_at"]);
  return j;
}

LeasedJob ReadLeasedJob(const pqxx::row& r) {
  return {.job = ReadJob(r),
          .spec_hash = Str(r["spec_hash"]),
          .target_id = I64(r["target_id"]),
          .budget = ReadBudget(r),
          .gen = Str(r["gen"])};
}

FindingRow ReadFinding(const pqxx::row& r) {
  return {.id = I64(r["id"]),
          .signature = Str(r["signature"]),
          .kind = Word<v1::VerdictKind>(r["kind"]),
          .spec_hash = Str(r["spec_hash"]),
          .reason = Str(r["reason"]),
          .target_id = I64(r["target_id"]),
          .count = I64(r["count"]),
          .first_seen = I64(r["first_seen"]),
          .last_seen = I64(r["last_seen"]),
          .smallest_counterexample_id = I64(r["smallest_counterexample_id"])};
}

CounterexampleRow ReadCounterexample(const pqxx::row& r) {
  return {.id = I64(r["id"]),
          .finding_id = I64(r["finding_id"]),
          .run_id = I64(r["run_id"]),
          .job_id = I64(r["job_id"]),
          .spec_hash = Str(r["spec_hash"]),
          .target_id = I64(r["target_id"]),
          .seed = U64(r["seed"]),
          .branch_order = Str(r["branch_order"]),
          .feature_mask = Str(r["feature_mask"]),
          .cx = {.kind = Word<v1::VerdictKind>(r["kind"]),
                 .reason = Str(r["reason"]),
                 .diff = Str(r["diff"]),
                 .signature = Str(r["signature"]),
                 .input_json = Str(r["input_json"]),
                 .trace_json = Str(r["trace_json"]),
                 .document_json = Str(r["document_json"]),
                 .size = Int(r["size"]),
                 .unshrunk_size = Int(r["unshrunk_size"])},
          .created_at = I64(r["created_at"])};
}

CampaignRow ReadCampaign(const pqxx::row& r) {
  return {.id = I64(r["id"]),
          .name = Str(r["name"]),
          .cron = Str(r["cron"]),
          .tmpl = {.spec_hash = Str(r["spec_hash"]),
                   .target_id = FromText<int64_t>(r["target_id"]),
                   .jobs = FromText<int>(r["jobs"]),
                   .seed = FromText<uint64_t>(r["seed"]),
                   .stop_at_first_finding = Str(r["stop_at_first_finding"]) == "true",
                   .budget = {.steps = FromText<uint64_t>(r["steps"]),
                              .time_budget_ms = FromText<int64_t>(r["time_budget_ms"]),
                              .connections = FromText<int>(r["connections"]),
                              .max_in_flight = FromText<int>(r["max_in_flight"]),
                              .response_timeout_ms = FromText<int64_t>(r["response_timeout_ms"]),
                              .network = Str(r["network"]),
                              .max_frontier = FromText<uint64_t>(r["max_frontier"])},
                   .gen = Str(r["gen"])},
          .spec_name = Str(r["spec_name"]),
          .paused = Bool(r["paused"]),
          .created_at = I64(r["created_at"]),
          .last_fired_at = I64(r["last_fired_at"]),
          .last_run_id = I64(r["last_run_id"]),
          .next_fire_at = I64(r["next_fire_at"]),
          .last_error = Str(r["last_error"])};
}

WorkerInfo ReadWorker(const pqxx::row& r) {
  return {.name = Str(r["name"]),
          .slots = Int(r["slots"]),
          .adapters = SplitList(Str(r["adapters"])),
          .labels = SplitList(Str(r["labels"])),
          .version = Str(r["version"])};
}

int PageSize(const Page& page) { return std::clamp(page.size <= 0 ? kDefaultPageSize : page.size, 1, kMaxPageSize); }

absl::StatusOr<NumberedPage> ParsePage(const Page& page) {
  int64_t v = 0;
  if (!page.after.empty() && (!absl::SimpleAtoi(page.after, &v) || v < 0))
    return absl::InvalidArgumentError(absl::StrCat("bad page token \"", page.after, "\""));
  return NumberedPage{v, PageSize(page)};
}

}  // namespace dualswarm::coord
