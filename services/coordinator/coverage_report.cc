#include "services/coordinator/coverage_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/lang/branches.h"
#include "engine/lang/spec.h"

namespace dualswarm::coord {

absl::StatusOr<v1::Coverage> CoverageReport(const v1::Spec& spec, const CoverageRow& row) {
  auto loaded = lang::LoadSpec(spec.file_name(), spec.source());
  if (!loaded.ok())
    return absl::FailedPreconditionError(
        absl::StrCat("spec ", spec.hash(), " no longer loads: ", loaded.status().message()));
  const std::vector<lang::Branch>& branches = (*loaded)->branches;
  v1::Coverage out;
  out.set_spec_hash(row.spec_hash);
  out.set_jobs(static_cast<int32_t>(std::min<int64_t>(row.jobs, INT32_MAX)));
  out.set_total(static_cast<int32_t>(branches.size()));
  int32_t covered = 0;
  for (size_t id = 0; id < branches.size(); ++id) {
    const lang::Branch& b = branches[id];
    v1::SpecBranch* p = out.add_branches();
    p->set_id(static_cast<int32_t>(id));
    p->set_line(b.loc.line);
    p->set_column(b.loc.col);
    p->set_scope(b.scope);
    p->set_label(lang::BranchLabel(b));
    const bool hit = std::binary_search(row.covered.begin(), row.covered.end(), static_cast<int32_t>(id));
    p->set_covered(hit);
    covered += hit;
  }
  out.set_covered(covered);
  return out;
}

}  // namespace dualswarm::coord
