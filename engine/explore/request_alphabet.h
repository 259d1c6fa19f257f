// The requests a spec's `gen` block can make in one model state, enumerated
// instead of sampled: every oneof/freq alternative, every pick(), a few
// values for each random_int(), and a fixed word list for random_word(), so
// that `dualswarm explore` (explorer.h) sees a small, bounded alphabet.
// observed() has no trace to refer to here: alternatives that need it make
// nothing.
#ifndef DUALSWARM_ENGINE_EXPLORE_REQUEST_ALPHABET_H_
#define DUALSWARM_ENGINE_EXPLORE_REQUEST_ALPHABET_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/value.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"

namespace dualswarm::explore {

struct AlphabetOptions {
  // What random_word(n) and random_etag() may give (random_etag quotes
  // them), whatever n asks: a small domain keeps the state space small.
  std::vector<std::string> words = {"a", "b"};
  // random_int(lo, hi): lo, lo+1, ... at most this many values.
  int int_choices = 2;
  // Most distinct requests per state (the first ones in enumeration order).
  size_t max_requests = 64;
  // Most gen runs per state (each run follows one sequence of choices).
  size_t max_runs = 4096;
};

// Every distinct request (by value) `gen` makes from `globals`, in the order
// of the choices that make it; *cut (when given) says whether max_requests
// or max_runs left some out. FailedPrecondition for a spec error in the gen
// block (file:line:col).
absl::StatusOr<std::vector<ir::Value>> EnumerateRequests(const lang::Interpreter& interp, const std::string& gen,
                                                         const std::vector<ir::Value>& globals,
                                                         const AlphabetOptions& options, bool* cut = nullptr);

}  // namespace dualswarm::explore

#endif  // DUALSWARM_ENGINE_EXPLORE_REQUEST_ALPHABET_H_
