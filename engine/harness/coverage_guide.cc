#include "engine/harness/coverage_guide.h"

#include <algorithm>

#include "engine/check/path_oracle.h"

namespace dualswarm::harness {

namespace {

// Where a prediction's own `fresh` values are numbered from: far above the
// ids the checker gives the variables of the model state (each step's, or
// counted up from 0), so that the two never meet.
constexpr int64_t kPredictionVarBase = int64_t{1} << 50;

}  // namespace

CoverageGuide::CoverageGuide(std::shared_ptr<const lang::Spec> spec, lang::ConnectionNodes nodes,
                             const std::atomic<bool>* cancel)
    : spec_(std::move(spec)),
      cancel_(cancel),
      interp_(spec_.get(), nodes),
      solver_(500),
      reached_(spec_->branches.size(), false) {}

std::vector<int32_t> CoverageGuide::Predict(const std::vector<ir::Value>& globals, const ir::Value& request) {
  const std::vector<sym::TermRef> no_constraints;
  check::PathOracle oracle(&solver_, &no_constraints, kPredictionVarBase, [this] {
    return cancel_ != nullptr && cancel_->load() ? absl::CancelledError("interrupted") : absl::OkStatus();
  });
  lang::StepOutput out;
  std::vector<int32_t> taken, all;
  out.branches = &taken;
  int paths = 0;
  do {
    oracle.Restart();
    const absl::Status st = interp_.RunHandler(globals, request, ir::Value::Int(0), &oracle, &out);
    // A killed path never happened; a path that fails still shows where
    // it went until then.
    if (st.ok() && (out.killed || oracle.dead())) continue;
    all.insert(all.end(), taken.begin(), taken.end());
    if (!st.ok()) break;
  } while (++paths < kMaxPaths && oracle.NextPath());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

size_t CoverageGuide::Novelty(const std::vector<int32_t>& branches) const {
  size_t n = 0;
  for (const int32_t id : branches)
    if (id >= 0 && static_cast<size_t>(id) < reached_.size() && !reached_[static_cast<size_t>(id)]) ++n;
  return n;
}

void CoverageGuide::Reach(const std::vector<int32_t>& branches) {
  for (const int32_t id : branches)
    if (id >= 0 && static_cast<size_t>(id) < reached_.size()) reached_[static_cast<size_t>(id)] = true;
}

}  // namespace dualswarm::harness
