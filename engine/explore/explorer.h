// `dualswarm explore`: model checking a spec before testing anything. The
// spec is composed with its own `gen` block (the requests it can make in a
// state, request_alphabet.h) and explored depth-first to a depth bound:
// states are the spec's globals with their path constraints, compared by
// their canonical text; a transition is one request handled along one of
// its paths (the server takes requests one at a time, so every
// interleaving of clients is a sequence of requests). Reported: spec
// errors a reachable request runs into (failed `assert`, type errors,
// limits), deadlocks (a request the spec has no feasible path for: it
// could answer nothing) and violations of the spec's `property`s (their
// monitors run on each path's requests and responses), each with the
// shortest request sequence found.
// Jobs of a swarm differ by the order they try requests in
// (docs/explore.md).
#ifndef DUALSWARM_ENGINE_EXPLORE_EXPLORER_H_
#define DUALSWARM_ENGINE_EXPLORE_EXPLORER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/explore/request_alphabet.h"
#include "engine/ir/value.h"
#include "engine/lang/spec.h"

namespace dualswarm::explore {

// The order a state's requests are tried in: as the gen block enumerates
// them, reversed, or a permutation drawn from the seed and the state.
enum class ActionOrder { kFirst, kLast, kRandom };
const char* ActionOrderName(ActionOrder o);
absl::StatusOr<ActionOrder> ParseActionOrder(const std::string& name);

struct ExploreOptions {
  std::string gen = "request";
  int max_depth = 6;              // requests from the initial state
  uint64_t max_states = 200'000;  // distinct states kept (each by its text: memory)
  double max_seconds = 60;        // wall time
  ActionOrder order = ActionOrder::kFirst;
  uint64_t seed = 1;           // for ActionOrder::kRandom
  size_t max_violations = 20;  // distinct violations kept
  bool stop_at_first = false;  // stop at the first violation
  AlphabetOptions alphabet;
  unsigned solver_timeout_ms = 2000;
  const std::atomic<bool>* cancel = nullptr;  // set: stop at once (bound "interrupted")
};

struct Violation {
  enum class Kind { kSpecError, kDeadlock, kProperty };
  Kind kind = Kind::kSpecError;
  std::string message;              // "file:line:col: ..." for spec errors
  std::vector<ir::Value> requests;  // from the initial state; the last one fails
};
const char* ViolationKindName(Violation::Kind k);  // spec-error | deadlock | property

struct ExploreResult {
  uint64_t states = 0;        // distinct states reached
  uint64_t transitions = 0;   // (state, request, path) steps taken
  uint64_t handler_runs = 0;  // paths run
  int depth_reached = 0;
  // States whose requests the alphabet's bounds (max_requests, max_runs)
  // cut short: then not everything within the depth was explored.
  uint64_t states_with_requests_cut = 0;
  // Times a property's monitor stopped judging on a path: one of its
  // conditions read a symbolic value (a `fresh` one the spec sent), so
  // what lies below went unchecked for that property.
  uint64_t monitors_unknown = 0;
  // The bound that stopped the search ("state bound 200000", "time bound
  // 60 s", ...); empty when it ran to the depth bound.
  std::string stopped_by;
  // Every state within max_depth explored with every request.
  bool complete() const { return stopped_by.empty() && states_with_requests_cut == 0; }
  double seconds = 0;
  double seconds_to_first_violation = -1;  // -1: none found
  std::vector<Violation> violations;       // each message once, shortest sequence found
};

// FailedPrecondition when the spec cannot be explored (no such gen block,
// an origin role). `on fault` handlers are ignored: faults never happen
// during exploration.
absl::StatusOr<ExploreResult> Explore(std::shared_ptr<const lang::Spec> spec, const ExploreOptions& options);

// {"states":..,"transitions":..,"depth_reached":..,"complete":..,"stopped_by":..,"seconds":..,
//  "states_per_second":..,"violations":[{"kind":..,"message":..,"requests":[...]}]}
std::string ExploreResultToJson(const ExploreResult& r);

}  // namespace dualswarm::explore

#endif  // DUALSWARM_ENGINE_EXPLORE_EXPLORER_H_
