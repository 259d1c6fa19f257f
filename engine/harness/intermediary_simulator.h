// Intermediary simulator: runs an intermediary's spec (one with an origin
// role, docs/spec-language.md: intermediaries) *as the server* between
// simulated clients and a simulated origin, with concrete random choices,
// and records what the tester would see on both sides (docs/trace-format.md:
// "side":"origin"). Its traces are, by construction, explained by the spec:
// the checker's soundness tests use them. Deterministic for a given seed.
//
// The simulated intermediary opens origin connections lazily (at most
// IntermediarySimOptions::origin_connections at once), carries any message
// it sent to the origin on any of them in any order, reuses them across
// clients, pipelines up to origin_pipeline requests on one, and now and
// then closes an idle one. The origin answers each connection's requests
// in order (HTTP/1.1), at random moments, and the intermediary takes each
// answer at a random later moment. Every response the spec sends a client
// reaches it in order (per connection FIFO, as the clients' side always is).
#ifndef DUALSWARM_ENGINE_HARNESS_INTERMEDIARY_SIMULATOR_H_
#define DUALSWARM_ENGINE_HARNESS_INTERMEDIARY_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/check/observation.h"
#include "engine/harness/simulator.h"
#include "engine/lang/spec.h"

namespace dualswarm::harness {

// The origin's answer to a request the intermediary sent it (as the tester
// received it, with the "origin" field the adapter adds).
using AnswerFn = std::function<ir::Value(Rng&, const ir::Value& request)>;

struct IntermediarySimOptions {
  int connections = 3;                // clients, one connection each
  int requests = 50;                  // client requests in total
  int max_in_flight = 1;              // per client connection (pipelining when > 1)
  int origin_connections = 2;         // origin connections open at once, at most
  int origin_pipeline = 1;            // requests outstanding on one origin connection, at most
  double origin_reuse = 0.7;          // probability to forward on an open connection with room when a new one may open
  double origin_close = 0.05;         // per action, probability that an idle origin connection is closed
  double truncate_probability = 0.2;  // the trace is cut short with exchanges unfinished
  uint64_t seed = 1;
  // Numbers among them, for a spec's `to_int(fresh string) >= n` (a cache's
  // Age: 5000 is more than any Age the shipped origin gens send).
  std::vector<std::string> fresh_strings = {"\"a1\"", "\"b2\"", "x", "0", "5000"};
  int fresh_int_bound = 10;  // a `fresh int` is one of 0 ... bound - 1 (600 reaches HTTP's statuses)
};

absl::StatusOr<std::vector<check::Observation>> SimulateIntermediary(const lang::Spec& spec,
                                                                     const RequestFn& next_request,
                                                                     const AnswerFn& answer,
                                                                     const IntermediarySimOptions& opts);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_INTERMEDIARY_SIMULATOR_H_
