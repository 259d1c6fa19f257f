// Spec coverage (docs/coverage.md): the branch ids jobs reported when they
// completed (jobs.covered_branches, recorded by CompleteJob), united over a
// run's jobs or over a campaign's runs of one spec version.
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/store.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {
namespace {

// The union of the covered branches of the jobs `where` selects (a
// condition on jobs j with $1 and $2 bound to `a` and `b`).
template <typename A, typename B>
void UniteJobs(Sql& w, const std::string& where, const A& a, const B& b, CoverageRow* out) {
  pqxx::row row =
      w.exec_params1(absl::StrCat("SELECT COALESCE((SELECT array_to_string(array_agg(DISTINCT x ORDER BY x), ',')"
                                  "   FROM jobs j, unnest(j.covered_branches) AS x WHERE ",
                                  where,
                                  "), '') AS ids,"
                                  " (SELECT count(*) FROM jobs j WHERE ",
                                  where, " AND cardinality(j.covered_branches) > 0) AS jobs"),
                     a, b);
  for (absl::string_view id : absl::StrSplit(Str(row["ids"]), ',', absl::SkipEmpty())) {
    int32_t n = 0;
    if (absl::SimpleAtoi(id, &n)) out->covered.push_back(n);
  }
  out->jobs = I64(row["jobs"]);
}

}  // namespace

absl::StatusOr<CoverageRow> Store::RunCoverage(int64_t run_id) {
  return Run<CoverageRow>("reading a run's coverage", [&](Sql& w) -> absl::StatusOr<CoverageRow> {
    pqxx::result run = w.exec_params("SELECT spec_hash FROM runs WHERE id = $1", run_id);
    if (run.empty()) return absl::NotFoundError(absl::StrCat("no run ", run_id));
    CoverageRow out;
    out.spec_hash = Str(run[0]["spec_hash"]);
    UniteJobs(w, "j.run_id = $1 AND $2::int = 0", run_id, 0, &out);
    return out;
  });
}

absl::StatusOr<CoverageRow> Store::CampaignCoverage(int64_t campaign_id) {
  return Run<CoverageRow>("reading a campaign's coverage", [&](Sql& w) -> absl::StatusOr<CoverageRow> {
    if (w.exec_params("SELECT 1 FROM campaigns WHERE id = $1", campaign_id).empty())
      return absl::NotFoundError(absl::StrCat("no campaign ", campaign_id));
    CoverageRow out;
    pqxx::result latest =
        w.exec_params("SELECT spec_hash FROM runs WHERE campaign_id = $1 ORDER BY id DESC LIMIT 1", campaign_id);
    if (latest.empty()) return out;
    out.spec_hash = Str(latest[0]["spec_hash"]);
    UniteJobs(w, "j.run_id IN (SELECT id FROM runs WHERE campaign_id = $1 AND spec_hash = $2)", campaign_id,
              out.spec_hash, &out);
    return out;
  });
}

}  // namespace dualswarm::coord
