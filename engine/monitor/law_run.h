// One run of an interface's law (docs/interfaces.md) read off a trace: the
// law, the values of its parameters, and the library calls the run made
// with their answers so far. Evaluate() runs the law again from the start
// against those answers (a law is deterministic, so its k-th call is the
// same each time): it ends, or stops at the first call not answered yet
// (needed() is then that call). The generator (engine/harness) and the
// checker's law monitor share it, so what the tester asks and what the
// trace is judged by are one computation.
#ifndef DUALSWARM_ENGINE_MONITOR_LAW_RUN_H_
#define DUALSWARM_ENGINE_MONITOR_LAW_RUN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/value.h"
#include "engine/lang/interp.h"

namespace dualswarm::monitor {

// Most calls one run of a law may make (limit: law calls).
inline constexpr size_t kMaxLawCalls = 256;

// A call a law made, as the library protocol writes it:
// {"call": NAME, "args": [...]} (plus the tester's "law" tag).
struct LawCall {
  std::string op;
  std::vector<ir::Value> args;
};

class LawRun {
 public:
  LawRun(const lang::Spec* spec, const lang::LawDecl* law, std::vector<ir::Value> args)
      : spec_(spec), law_(law), args_(std::move(args)) {}

  const lang::LawDecl& law() const { return *law_; }
  const std::vector<ir::Value>& args() const { return args_; }
  size_t calls() const { return requests_.size(); }

  // The run's next call went out (its message as sent), and call k's
  // answer came back.
  void Sent(ir::Value request) {
    requests_.push_back(std::move(request));
    responses_.emplace_back();
  }
  void Answered(size_t k, ir::Value response) {
    if (k < responses_.size()) responses_[k] = std::move(response);
  }

  // Runs the law against the calls so far. kPending: needed() is the call
  // to make next (when every call made is answered). Errors: spec bugs.
  absl::StatusOr<lang::LawOutcome> Evaluate(const lang::Interpreter& interp);
  const std::optional<LawCall>& needed() const { return needed_; }

  // The calls and answers, for a finding: `op(args) -> answer`, one per line.
  std::string Describe() const;

 private:
  const lang::Spec* spec_;
  const lang::LawDecl* law_;
  std::vector<ir::Value> args_;
  std::vector<ir::Value> requests_;
  std::vector<std::optional<ir::Value>> responses_;
  std::optional<LawCall> needed_;
};

// The library protocol's request for `call` (without the tester's tag).
ir::Value LawCallRequest(const LawCall& call);

}  // namespace dualswarm::monitor

#endif  // DUALSWARM_ENGINE_MONITOR_LAW_RUN_H_
