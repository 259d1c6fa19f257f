// Coverage-guided generation (`dualswarm test --coverage-guided`,
// docs/coverage.md): the tester draws several candidate requests from the
// `gen` block and sends the one whose handler paths, run symbolically from
// the current model state, reach the most spec branches no request sent
// before was predicted to reach. The spec decides which branches a request
// can take; the SUT still decides which of them it does.
#ifndef DUALSWARM_ENGINE_HARNESS_COVERAGE_GUIDE_H_
#define DUALSWARM_ENGINE_HARNESS_COVERAGE_GUIDE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/ir/value.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"
#include "engine/sym/solver.h"

namespace dualswarm::harness {

class CoverageGuide {
 public:
  // Most handler paths one prediction runs (past it the prediction is what
  // the first ones reached).
  static constexpr int kMaxPaths = 64;

  CoverageGuide(std::shared_ptr<const lang::Spec> spec, lang::ConnectionNodes nodes);

  // The branches the client handler may take on `request` from `globals`
  // (every feasible path; a spec error on a path ends the prediction
  // there: the checker reports it), sorted, each once.
  std::vector<int32_t> Predict(const std::vector<ir::Value>& globals, const ir::Value& request);
  // How many of `branches` no earlier Reach() reached.
  size_t Novelty(const std::vector<int32_t>& branches) const;
  // The request predicted to reach `branches` was sent.
  void Reach(const std::vector<int32_t>& branches);

 private:
  std::shared_ptr<const lang::Spec> spec_;
  lang::Interpreter interp_;
  sym::Solver solver_;
  std::vector<bool> reached_;  // by branch id
};

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_COVERAGE_GUIDE_H_
