// Simulator: runs a spec *as the server* with concrete random choices
// (either-branches and fresh values picked at random) behind a random
// network (per-connection FIFO, arbitrary delays across connections) and
// records what clients would observe. Its traces are, by construction,
// explained by the spec: the soundness tests and checker benchmarks use
// them. Deterministic for a given seed.
#ifndef DUALSWARM_ENGINE_HARNESS_SIMULATOR_H_
#define DUALSWARM_ENGINE_HARNESS_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/check/observation.h"
#include "engine/lang/spec.h"

namespace dualswarm::harness {

using Rng = std::mt19937_64;
// Produces the next request a client sends (the spec's message IR).
using RequestFn = std::function<ir::Value(Rng&)>;

struct SimOptions {
  int connections = 4;
  int requests = 100;          // requests sent in total
  int max_in_flight = 1;       // per connection (pipelining when > 1)
  uint64_t seed = 1;
  // Probability that the trace is cut short with some requests unanswered.
  double truncate_probability = 0.2;
  // Strings a `fresh string` may become (a few, so values repeat).
  std::vector<std::string> fresh_strings = {"\"a1\"", "\"b2\"", "W/\"c3\"", "\"d4\"", "x"};
};

absl::StatusOr<std::vector<check::Observation>> Simulate(const lang::Spec& spec,
                                                          const RequestFn& next_request,
                                                          const SimOptions& opts);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_SIMULATOR_H_
