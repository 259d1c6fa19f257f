// Row mapping, internal to the store (store/*.cc): for each row struct of
// store.h, the table of columns (columns.h) that gives both the SELECT list
// that fetches it and the reader that fills it in, and the paging of
// listings.
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
#include "services/coordinator/store/columns.h"
#include "services/coordinator/store/sql.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// The words of every value of E but the zero value.
template <typename E>
std::vector<std::string> AllWords() {
  std::vector<std::string> out;
  for (E v : wire::EnumValues<E>()) out.push_back(wire::EnumWord(v));
  return out;
}

// The column tables (columns.h), one per row struct; list() is the SELECT
// list, Read / reader() the reader.

// specs (a listing adds `seq`, its page token).
const Columns<SpecRow>& SpecColumns();
// targets; usable in RETURNING too. TargetListColumns() leaves the
// descriptor set's bytes out (only its size), for listings.
const Columns<TargetRow>& TargetColumns();
const Columns<TargetRow>& TargetListColumns();

// Runs `r` with their job counts (one lateral aggregate per run `c`):
// RunColumns().Select(StrCat(kRunFrom, "WHERE ...")).
const Columns<RunRow>& RunColumns();
inline constexpr const char* kRunFrom =
    "FROM runs r CROSS JOIN LATERAL ("
    "  SELECT count(*) FILTER (WHERE state = 'queued') AS n_queued,"
    "         count(*) FILTER (WHERE state = 'leased') AS n_leased,"
    "         count(*) FILTER (WHERE state = 'passed') AS n_passed,"
    "         count(*) FILTER (WHERE state = 'failed') AS n_failed,"
    "         count(*) FILTER (WHERE state = 'error') AS n_error,"
    "         count(*) FILTER (WHERE state = 'cancelled') AS n_cancelled,"
    "         count(*) AS n_total"
    "  FROM jobs WHERE run_id = r.id) c ";

// Jobs `j` (FROM jobs j). JobColumns leave reason and updated_at unset;
// JobDetailColumns read them too.
const Columns<JobRow>& JobColumns();
const Columns<JobRow>& JobDetailColumns();
// A leased job: the job `j` and its run `r`.
const Columns<LeasedJob>& LeasedJobColumns();

// findings.
const Columns<FindingRow>& FindingColumns();
// Counterexamples `c` with their job `j` and run `r`:
// CounterexampleColumns().Select(StrCat(kCounterexampleFrom, "WHERE ...")).
const Columns<CounterexampleRow>& CounterexampleColumns();
inline constexpr const char* kCounterexampleFrom =
    "FROM counterexamples c JOIN jobs j ON j.id = c.job_id JOIN runs r ON r.id = c.run_id ";

// campaigns. The template is jsonb in protobuf's JSON mapping of
// RunTemplate (64-bit integers as strings), written and read field by
// field in SQL.
const Columns<CampaignRow>& CampaignColumns();

// workers (registration as sent).
const Columns<WorkerInfo>& WorkerColumns();

// The first row of columns.Select(from), read by `columns`; NOT_FOUND
// saying `missing` when there is none.
template <typename Row, typename... Args>
absl::StatusOr<Row> ReadOne(Sql& w, const Columns<Row>& columns, const std::string& missing, absl::string_view from,
                            const Args&... args) {
  pqxx::result r = w.exec_params(columns.Select(from), args...);
  if (r.empty()) return absl::NotFoundError(missing);
  return columns.Read(r[0]);
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
