// Spec coverage as a run reports it: how many of a spec's branches
// (lang/branches.h) a set of covered ids reaches, and which it does not,
// for people (`dualswarm test`) and as JSON (`--json`, docs/coverage.md).
#ifndef DUALSWARM_ENGINE_HARNESS_COVERAGE_H_
#define DUALSWARM_ENGINE_HARNESS_COVERAGE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/lang/spec.h"

namespace dualswarm::harness {

// `covered`: branch ids, sorted, each once (ids the spec does not have are
// ignored).
struct CoverageCount {
  size_t covered = 0;
  size_t total = 0;
};
CoverageCount CountCoverage(const lang::Spec& spec, const std::vector<int32_t>& covered);

// {"covered":N,"total":M,"branches":[ids covered],"uncovered":[{"id":I,
// "at":"file:line:col","in":"fn name","branch":"if: else"},...]}.
std::string CoverageToJson(const lang::Spec& spec, const std::vector<int32_t>& covered);

// "spec coverage: 45 of 60 branches (75 %)", then the first `max_listed`
// branches never taken, one per line ("  file:12:5  fn name: if: else"),
// and how many more there are.
std::string FormatCoverage(const lang::Spec& spec, const std::vector<int32_t>& covered, size_t max_listed);

// The union of two sorted id lists.
std::vector<int32_t> MergeCoverage(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_COVERAGE_H_
