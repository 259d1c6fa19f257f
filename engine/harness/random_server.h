// What the simulators (simulator.h, intermediary_simulator.h) share to run
// a spec *as the server* with concrete random choices: an oracle that
// picks `either` branches and `fresh` values at random, the step runner
// that draws again when an `assume` kills the path, and what a client
// would see of a spec message.
#ifndef DUALSWARM_ENGINE_HARNESS_RANDOM_SERVER_H_
#define DUALSWARM_ENGINE_HARNESS_RANDOM_SERVER_H_

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/value.h"
#include "engine/lang/interp.h"

namespace dualswarm::harness {

using Rng = std::mt19937_64;

class RandomOracle : public lang::Oracle {
 public:
  // `fresh_strings`: what a `fresh string` may become (a few, so values
  // repeat); a `fresh int` becomes one of 0 ... fresh_int_bound - 1.
  RandomOracle(Rng* rng, const std::vector<std::string>* fresh_strings, int fresh_int_bound = 10)
      : rng_(rng), fresh_strings_(fresh_strings), fresh_int_bound_(fresh_int_bound) {}
  int Choose(int n, lang::Loc) override;
  ir::Value Fresh(sym::Sort sort, lang::Loc) override;
  // Concrete runs never meet symbolic conditions.
  bool Decide(const sym::TermRef&, lang::Loc) override { return false; }
  bool Assume(const sym::TermRef&, lang::Loc) override { return false; }
  bool Possible(const sym::TermRef&) override { return false; }

 private:
  Rng* rng_;
  const std::vector<std::string>* fresh_strings_;
  const int fresh_int_bound_;
};

// What a client would see of a spec message: fields set to `none` are
// absent, `some(v)` is v.
ir::Value Concretize(const ir::Value& v);

// Runs one server step (`run` fills a StepOutput) along a random path; an
// `assume` may kill the path, so it draws again (rejection sampling, at
// most 1000 times; `what` names the step in the error).
absl::StatusOr<lang::StepOutput> RunServerStep(const std::function<absl::Status(lang::StepOutput*)>& run,
                                               const std::string& what);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_RANDOM_SERVER_H_
