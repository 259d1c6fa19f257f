// Row mapping, internal to the store (store/*.cc): for each row struct of
// store.h, the SELECT list that fetches it and the reader that fills it in,
// and the paging of listings.
//
// Every column of a SELECT list is named (`expr AS name`) and every reader
// reads columns by those names (row["name"]), never by position: adding,
// removing or reordering a column cannot shift the other fields, and a
// reader asking for a column its query does not have fails loudly
// (INTERNAL: "Unknown column name") instead of reading a neighbour.
// Queries put extra columns anywhere in the list.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_ROWS_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_ROWS_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/store/sql.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// A column holding an enum's word ('cancelled'), as the enum; the zero
// value for '' (a job's outcome before completion).
template <typename E>
E Word(const pqxx::field& f) {
  return wire::EnumFromWord<E>(Str(f));
}
// The words of every value of E but the zero value.
template <typename E>
std::vector<std::string> AllWords() {
  std::vector<std::string> out;
  for (E v : wire::EnumValues<E>()) out.push_back(wire::EnumWord(v));
  return out;
}

// specs (plus `seq`, the listing's page token).
inline constexpr const char* kSpecCols =
    "hash, name, file_name, source, choice_sites, ds_us(created_at) AS created_at, seq";
SpecRow ReadSpec(const pqxx::row& r);

// targets; usable in RETURNING too.
inline constexpr const char* kTargetCols =
    "id, name, adapter, address, launch, readiness_probe, readiness_timeout_ms, reset_policy,"
    " array_to_string(labels, ',') AS labels, ds_us(created_at) AS created_at";
TargetRow ReadTarget(const pqxx::row& r);

// A run's budget, from runs `r`.
inline constexpr const char* kRunBudgetCols =
    "r.steps AS steps, r.time_budget_ms AS time_budget_ms, r.connections AS connections,"
    " r.max_in_flight AS max_in_flight, r.response_timeout_ms AS response_timeout_ms,"
    " r.network AS network, r.max_frontier AS max_frontier";
JobBudget ReadBudget(const pqxx::row& r);

// Runs `r` with their job counts (one lateral aggregate per run); append
// "WHERE ...".
extern const std::string kRunSelect;
RunRow ReadRun(const pqxx::row& r);

// Jobs `j` (FROM jobs j); ReadJob leaves reason and updated_at unset,
// ReadJobDetail reads them too (kJobDetailCols).
inline constexpr const char* kJobCols =
    "j.id AS id, j.run_id AS run_id, j.idx AS idx, j.seed AS seed,"
    " j.branch_order AS branch_order, j.feature_mask AS feature_mask, j.state AS state,"
    " COALESCE(j.lease_token, '') AS lease_token, ds_us(j.lease_expires_at) AS lease_expires_at,"
    " COALESCE(j.worker_id, '') AS worker_id, j.attempts AS attempts, j.outcome AS outcome";
inline constexpr const char* kJobDetailCols = "j.reason AS reason, ds_us(j.updated_at) AS updated_at";
JobRow ReadJob(const pqxx::row& r);
JobRow ReadJobDetail(const pqxx::row& r);

// A leased job: kJobCols of the job `j`, kLeasedRunCols of its run `r`.
inline constexpr const char* kLeasedRunCols = "r.spec_hash AS spec_hash, r.target_id AS target_id, r.gen AS gen";
LeasedJob ReadLeasedJob(const pqxx::row& r);

// findings.
inline constexpr const char* kFindingCols =
    "id, signature, kind, spec_hash, target_id, reason, count, ds_us(first_seen) AS first_seen,"
    " ds_us(last_seen) AS last_seen, COALESCE(smallest_counterexample_id, 0) AS smallest_counterexample_id";
FindingRow ReadFinding(const pqxx::row& r);

// Counterexamples `c` with their job `j` and run `r`; append "WHERE ...".
inline constexpr const char* kCounterexampleSelect =
    "SELECT c.id AS id, c.finding_id AS finding_id, c.run_id AS run_id, c.job_id AS job_id,"
    " r.spec_hash AS spec_hash, r.target_id AS target_id, j.seed AS seed,"
    " j.branch_order AS branch_order, j.feature_mask AS feature_mask, c.kind AS kind,"
    " c.reason AS reason, c.diff AS diff, c.signature AS signature, c.input_json AS input_json,"
    " c.trace_json AS trace_json, c.size AS size, c.unshrunk_size AS unshrunk_size,"
    " ds_us(c.created_at) AS created_at, c.document_json AS document_json"
    " FROM counterexamples c JOIN jobs j ON j.id = c.job_id JOIN runs r ON r.id = c.run_id ";
CounterexampleRow ReadCounterexample(const pqxx::row& r);

// campaigns. The template is jsonb in protobuf's JSON mapping of
// RunTemplate (64-bit integers as strings), written and read field by
// field in SQL.
inline constexpr const char* kCampaignCols =
    "id, name, cron, spec_name, paused, ds_us(created_at) AS created_at,"
    " ds_us(last_fired_at) AS last_fired_at, COALESCE(last_run_id, 0) AS last_run_id,"
    " ds_us(next_fire_at) AS next_fire_at, last_error,"
    " template->>'specHash' AS spec_hash, template->>'targetId' AS target_id,"
    " template->>'jobs' AS jobs, template->>'seed' AS seed,"
    " template->>'stopAtFirstFinding' AS stop_at_first_finding, template->>'gen' AS gen,"
    " template->'budget'->>'steps' AS steps, template->'budget'->>'timeBudgetMs' AS time_budget_ms,"
    " template->'budget'->>'connections' AS connections,"
    " template->'budget'->>'maxInFlight' AS max_in_flight,"
    " template->'budget'->>'responseTimeoutMs' AS response_timeout_ms,"
    " template->'budget'->>'network' AS network, template->'budget'->>'maxFrontier' AS max_frontier";
CampaignRow ReadCampaign(const pqxx::row& r);

// workers (registration as sent).
inline constexpr const char* kWorkerCols =
    "name, slots, array_to_string(adapters, ',') AS adapters,"
    " array_to_string(labels, ',') AS labels, version";
WorkerInfo ReadWorker(const pqxx::row& r);

// The first row `sql` selects, read with read(row); NOT_FOUND saying
// `missing` when there is none.
template <typename Read, typename... Args>
auto ReadOne(Sql& w, Read read, const std::string& missing, const std::string& sql, const Args&... args)
    -> absl::StatusOr<decltype(read(std::declval<const pqxx::row&>()))> {
  pqxx::result r = w.exec_params(sql, args...);
  if (r.empty()) return absl::NotFoundError(missing);
  return read(r[0]);
}

// --- paging ---
// The page's size: the default for 0, clamped to 1..kMaxPageSize.
int PageSize(const Page& page);
// A page with a numeric token ("" = 0; INVALID_ARGUMENT for anything else).
struct NumberedPage {
  int64_t after = 0;  // the token
  int size = 0;       // PageSize
};
absl::StatusOr<NumberedPage> ParsePage(const Page& page);

// One page out of `r`, the result of a query for size + 1 rows: the first
// `size` rows read with read(row), and when there was one more, the next
// page's token next(last item, its row).
template <typename T, typename Read, typename Next>
Listing<T> ReadPage(const pqxx::result& r, int size, Read read, Next next) {
  Listing<T> out;
  int n = std::min<int>(size, static_cast<int>(r.size()));
  for (int i = 0; i < n; ++i) out.items.push_back(read(r[i]));
  if (static_cast<int>(r.size()) > size) out.next = next(out.items.back(), r[size - 1]);
  return out;
}

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_ROWS_H_
