// Coverage-guided generation (`dualswarm test --coverage-guided`,
// docs/coverage.md): the tester draws several candidate requests from the
// `gen` block and sends the one whose handler paths, run symbolically from
// the current model state, reach the most spec branches no request sent
// before was predicted to reach. The spec decides which branches a request
// can take; the SUT still decides which of them it does.
#ifndef DUALSWARM_ENGINE_HARNESS_COVERAGE_GUIDE_H_
#define DUALSWARM_ENGINE_HARNESS_COVERAGE_GUIDE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/ir/value.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"
#include "engine/sym/solver.h"

namespace dualswarm::harness {

// Candidates drawn per request by `--coverage-guided` (dualswarm test, run
// submit, campaign create), and the most a run may ask for: each costs a
// symbolic run of the handler per request.
inline constexpr int kDefaultGuideCandidates = 8;
inline constexpr int kMaxGuideCandidates = 64;

class CoverageGuide {
 public:
  // Most handler paths one prediction runs (past it the prediction is what
  // the first ones reached).
  static constexpr int kMaxPaths = 64;

  // `cancel` (may be null): once set, a prediction stops where it is.
  CoverageGuide(std::shared_ptr<const lang::Spec> spec, lang::ConnectionNodes nodes,
                const std::atomic<bool>* cancel = nullptr);

  // The branches the client handler may take on `request` from `globals`,
  // sorted, each once: those of its feasible paths (at most kMaxPaths, each
  // within the interpreter's step limit; a spec error on a path ends the
  // prediction there: the checker reports it). The model state's path
  // constraints are not known here, so a symbolic branch counts as
  // feasible whenever its condition alone may hold: a prediction may
  // over-approximate, which only steers generation.
  std::vector<int32_t> Predict(const std::vector<ir::Value>& globals, const ir::Value& request);
  // Most Z3 calls one concolic prediction may make (its paths' branch
  // checks and the solution): past it, the paths run so far are all.
  static constexpr uint64_t kMaxConcolicZ3Calls = 64;

  // Concolic prediction: `request`'s fields may hold `inputs`, variables
  // standing for the gen block's random draws, within `domain` (their
  // ranges and the arms the gen block took); `draws` are values drawn for
  // them. Runs the handler's feasible paths (at most kMaxPaths) as Predict
  // does, picks the one that reaches the most branches no earlier Reach()
  // reached, and asks Z3 for values of the inputs that take it. Returns a
  // value for every input: Z3's for those that path's conditions constrain
  // (directly or through `domain`), the draws for the rest — unless then
  // some `domain` constraint fails, when Z3's are taken for all. nullopt
  // when no path reaches a new branch or Z3 found no values in time.
  std::optional<sym::Bindings> SolveForNewBranches(const std::vector<ir::Value>& globals, const ir::Value& request,
                                                   const std::vector<sym::TermRef>& inputs,
                                                   const std::vector<sym::TermRef>& domain, const sym::Bindings& draws);
  // How many of `branches` no earlier Reach() reached.
  size_t Novelty(const std::vector<int32_t>& branches) const;
  // The request predicted to reach `branches` was sent.
  void Reach(const std::vector<int32_t>& branches);

 private:
  std::shared_ptr<const lang::Spec> spec_;
  const std::atomic<bool>* cancel_;
  lang::Interpreter interp_;
  sym::Solver solver_;
  std::vector<bool> reached_;  // by branch id
};

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_COVERAGE_GUIDE_H_
