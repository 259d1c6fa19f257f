// Findings: counterexamples grouped by signature per spec version and
// target, each group with its count and smallest counterexample; recorded
// as failed jobs complete, then listed and read.
#include "services/coordinator/store/findings.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/store/limits.h"
#include "services/coordinator/store/rows.h"
#include "services/coordinator/store/transaction.h"
#include "util/status_macros.h"

namespace dualswarm::coord {

absl::StatusOr<NewCounterexample> CheckCounterexample(const Completion& c) {
  if (!c.counterexample.has_value()) return absl::InvalidArgumentError("a failed job must report its counterexample");
  NewCounterexample cx = *c.counterexample;
  for (std::string* text : {&cx.reason, &cx.diff, &cx.signature, &cx.input_json, &cx.trace_json, &cx.document_json})
    *text = ScrubText(std::move(*text));
  if (!wire::IsKnown(cx.kind))
    return absl::InvalidArgumentError(absl::StrCat("unknown verdict kind \"", wire::EnumWord(cx.kind),
                                                   "\" (known: ", wire::EnumChoices<v1::VerdictKind>(", "), ")"));
  // One definition of a signature (harness::ComputeSignature, computed by
  // the worker that found it); the store never invents one.
  if (cx.signature.empty())
    return absl::InvalidArgumentError("a failed job must report its counterexample's signature");
  if (cx.signature.size() > kMaxSignatureBytes) return absl::InvalidArgumentError("signature too long");
  if (cx.input_json.size() + cx.trace_json.size() + cx.document_json.size() > kMaxCounterexampleBytes)
    return absl::InvalidArgumentError("counterexample exceeds 8 MiB");
  return cx;
}

void RecordCounterexample(Sql& w, const FoundIn& where, const NewCounterexample& cx) {
  int64_t finding = w.exec_params1(
                         "INSERT INTO findings (spec_hash, target_id, signature, kind, reason)"
                         " VALUES ($1, $2, $3, $4, $5)"
                         " ON CONFLICT (spec_hash, target_id, signature)"
                         " DO UPDATE SET last_seen = now() RETURNING id",
                         where.spec_hash, where.target_id, cx.signature, wire::EnumWord(cx.kind), cx.reason)[0]
                        .as<int64_t>();
  int64_t cx_id =
      w.exec_params1(
           "INSERT INTO counterexamples (finding_id, run_id, job_id, lease_token,"
           " kind, reason, diff, signature, input_json, trace_json, size,"
           " unshrunk_size, document_json)"
           " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
           " RETURNING id",
           finding, where.run_id, where.job_id, where.lease_token, wire::EnumWord(cx.kind), cx.reason, cx.diff,
           cx.signature, cx.input_json, cx.trace_json, cx.size, cx.unshrunk_size, cx.document_json)[0]
          .as<int64_t>();
  // The group's reason is its smallest counterexample's.
  w.exec_params0(
      "UPDATE findings SET count = count + 1, last_seen = now(),"
      " smallest_counterexample_id = CASE WHEN smallest_size IS NULL OR $3 < smallest_size"
      "   THEN $2 ELSE smallest_counterexample_id END,"
      " reason = CASE WHEN smallest_size IS NULL OR $3 < smallest_size THEN $4 ELSE reason END,"
      " smallest_size = LEAST(COALESCE(smallest_size, $3), $3)"
      " WHERE id = $1",
      finding, cx_id, cx.size, cx.reason);
}

absl::StatusOr<Listing<FindingRow>> Store::ListFindings(const std::string& spec_hash, int64_t target_id, int64_t run_id,
                                                        const Page& page) {
  RETURN_IF_ERROR(CheckText("spec_hash", spec_hash, true));
  ASSIGN_OR_RETURN(NumberedPage paging, ParsePage(page));
  return Run<Listing<FindingRow>>("listing findings", [&](Sql& w) -> absl::StatusOr<Listing<FindingRow>> {
    pqxx::result r = w.exec_params(
        FindingColumns().Select(
            "FROM findings f WHERE ($1 = '' OR spec_hash = $1) AND ($2::bigint = 0 OR target_id = $2::bigint)"
            " AND ($3::bigint = 0 OR EXISTS (SELECT 1 FROM counterexamples c"
            "                         WHERE c.finding_id = f.id AND c.run_id = $3::bigint))"
            " ORDER BY last_seen DESC, id DESC OFFSET $4 LIMIT $5"),
        spec_hash, target_id, run_id, paging.after, paging.size + 1);
    return ReadPage<FindingRow>(r, paging.size, FindingColumns().reader(), [&](const FindingRow&, const pqxx::row&) {
      return std::to_string(paging.after + paging.size);
    });
  });
}

absl::StatusOr<FindingRow> Store::GetFinding(int64_t id) {
  return ReadRow("reading a finding", FindingColumns(), absl::StrCat("no finding ", id), "FROM findings WHERE id = $1",
                 id);
}

absl::StatusOr<std::vector<CounterexampleRow>> Store::ListCounterexamples(int64_t finding_id, int limit) {
  limit = std::clamp(limit <= 0 ? kDefaultCounterexamples : limit, 1, kMaxCounterexamples);
  return Run<std::vector<CounterexampleRow>>(
      "listing counterexamples", [&](Sql& w) -> absl::StatusOr<std::vector<CounterexampleRow>> {
        pqxx::result r =
            w.exec_params(CounterexampleColumns().Select(absl::StrCat(
                              kCounterexampleFrom, "WHERE c.finding_id = $1 ORDER BY c.size, c.id LIMIT $2")),
                          finding_id, limit);
        std::vector<CounterexampleRow> out;
        for (const auto& row : r) out.push_back(CounterexampleColumns().Read(row));
        return out;
      });
}

}  // namespace dualswarm::coord
