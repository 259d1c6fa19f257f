// Interpreter for spec code. Runs one handler invocation (one atomic server
// step) along one path: every nondeterministic decision (an `either`, a
// `fresh` value, a branch on a symbolic condition, a symbolic `assume`) is
// delegated to an Oracle, so the same interpreter serves the symbolic
// checker (which enumerates paths) and the concrete simulator (which picks
// at random).
#ifndef DUALSWARM_ENGINE_LANG_INTERP_H_
#define DUALSWARM_ENGINE_LANG_INTERP_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/ir/value.h"
#include "engine/lang/spec.h"

namespace dualswarm::lang {

class Oracle {
 public:
  virtual ~Oracle() = default;
  // Picks one of n alternatives of an `either` (n >= 2).
  virtual int Choose(int n, Loc loc) = 0;
  // Value of `fresh SORT`.
  virtual ir::Value Fresh(sym::Sort sort, Loc loc) = 0;
  // Branch on a non-constant boolean term; the oracle records the
  // assumption it makes and returns the branch taken.
  virtual bool Decide(const sym::TermRef& cond, Loc loc) = 0;
  // `assume` on a non-constant term: false kills the path.
  virtual bool Assume(const sym::TermRef& cond, Loc loc) = 0;
  // Whether cond can hold under the current path (for symbolic `assert`).
  virtual bool Possible(const sym::TermRef& cond) = 0;
  // Asked every kPollEverySteps evaluation steps (limits.h): a non-OK
  // status stops the evaluation and is what it returns (a time bound, a
  // cancellation).
  virtual absl::Status Poll() { return absl::OkStatus(); }
};

// The tester's side of `gen` blocks: random choices, swarm masks and the
// live trace (for observed()).
class GenContext {
 public:
  virtual ~GenContext() = default;
  // Picks an alternative of oneof/freq site `site` (weights: one per
  // alternative, all 1 for oneof) that is not excluded; -1 when none is.
  virtual int ChooseAlternative(int site, const std::vector<int64_t>& weights, const std::vector<bool>& excluded) = 0;
  virtual int64_t RandomInt(int64_t lo, int64_t hi) = 0;  // inclusive
  virtual std::string RandomWord(int64_t length) = 0;
  virtual std::string RandomEtag() = 0;
  // A J-expression hole referring to a message of the trace that has
  // `path`, or nullopt when no message has it yet.
  virtual std::optional<ir::Value> Observed(const std::string& path) = 0;
};

struct SendRecord {
  ir::Value conn;
  ir::Value msg;
  Loc loc;
};

struct StepOutput {
  std::vector<ir::Value> globals;
  std::vector<SendRecord> sends;
  bool killed = false;  // an `assume` failed: this path does not exist
};

class Interpreter {
 public:
  explicit Interpreter(const Spec* spec) : spec_(spec) {}

  // Runs the handler on `request` received from `conn`. A spec bug (failed
  // assert, type error, unwrap of none, a limit of limits.h reached, ...)
  // returns FailedPrecondition with "file:line:col: message"; a non-OK
  // Oracle::Poll() is returned as it is.
  absl::Status RunHandler(const std::vector<ir::Value>& globals, const ir::Value& request, const ir::Value& conn,
                          Oracle* oracle, StepOutput* out) const;

  // Runs `gen NAME` against the model state `globals`; the result is a
  // J-expression (holes from observed()). FailedPrecondition for spec bugs
  // and when every alternative failed (e.g. pick() from empty lists).
  absl::StatusOr<ir::Value> RunGen(const std::string& name, const std::vector<ir::Value>& globals,
                                   GenContext* ctx) const;

  // Evaluates the spec's `partition` key for a request (the spec must have
  // one); spec bugs return FailedPrecondition with file:line:col.
  absl::StatusOr<ir::Value> PartitionKey(const ir::Value& request) const;

  // Evaluates the `var` initialisers in order.
  static absl::StatusOr<std::vector<ir::Value>> EvalInitialGlobals(const Spec& spec);

 private:
  const Spec* spec_;
};

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_INTERP_H_
