#include "engine/harness/coverage.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/ir/json.h"

namespace dualswarm::harness {
namespace {

std::vector<bool> CoveredMask(const lang::Spec& spec, const std::vector<int32_t>& covered) {
  std::vector<bool> mask(spec.branches.size(), false);
  for (const int32_t id : covered)
    if (id >= 0 && static_cast<size_t>(id) < mask.size()) mask[static_cast<size_t>(id)] = true;
  return mask;
}

CoverageCount CountOf(const std::vector<bool>& mask) {
  return {static_cast<size_t>(std::count(mask.begin(), mask.end(), true)), mask.size()};
}

}  // namespace

CoverageCount CountCoverage(const lang::Spec& spec, const std::vector<int32_t>& covered) {
  return CountOf(CoveredMask(spec, covered));
}

std::string CoverageToJson(const lang::Spec& spec, const std::vector<int32_t>& covered) {
  const std::vector<bool> mask = CoveredMask(spec, covered);
  const CoverageCount n = CountOf(mask);
  std::string out = absl::StrCat("{\"covered\":", n.covered, ",\"total\":", n.total, ",\"branches\":[");
  bool first = true;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (!mask[i]) continue;
    absl::StrAppend(&out, first ? "" : ",", i);
    first = false;
  }
  absl::StrAppend(&out, "],\"uncovered\":[");
  first = true;
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) continue;
    const lang::Branch& b = spec.branches[i];
    absl::StrAppend(&out, first ? "" : ",", "{\"id\":", i, ",\"at\":");
    ir::AppendJsonString(lang::FormatLoc(spec.file, b.loc), &out);
    absl::StrAppend(&out, ",\"in\":");
    ir::AppendJsonString(b.scope, &out);
    absl::StrAppend(&out, ",\"branch\":");
    ir::AppendJsonString(lang::BranchLabel(b), &out);
    absl::StrAppend(&out, "}");
    first = false;
  }
  absl::StrAppend(&out, "]}");
  return out;
}

std::string FormatCoverage(const lang::Spec& spec, const std::vector<int32_t>& covered, size_t max_listed) {
  const std::vector<bool> mask = CoveredMask(spec, covered);
  const CoverageCount n = CountOf(mask);
  if (n.total == 0) return "spec coverage: the spec has no branches\n";
  std::string out =
      absl::StrCat("spec coverage: ", n.covered, " of ", n.total, " branches (", 100 * n.covered / n.total, " %)");
  if (n.covered == n.total) return out + "\n";
  absl::StrAppend(&out, "; never taken:\n");
  size_t listed = 0;
  for (size_t i = 0; i < mask.size() && listed < max_listed; ++i) {
    if (mask[i]) continue;
    const lang::Branch& b = spec.branches[i];
    absl::StrAppend(&out, "  ", lang::FormatLoc(spec.file, b.loc), "  ", b.scope, ": ", lang::BranchLabel(b), "\n");
    ++listed;
  }
  const size_t rest = n.total - n.covered - listed;
  if (rest > 0) absl::StrAppend(&out, "  and ", rest, " more (--json lists them all)\n");
  return out;
}

std::vector<int32_t> MergeCoverage(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
  std::vector<int32_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace dualswarm::harness
