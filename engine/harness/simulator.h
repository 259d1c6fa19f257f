// Simulator: runs a spec *as the server* with concrete random choices
// (either-branches and fresh values picked at random) behind a random
// network (per-connection FIFO, arbitrary delays across connections) and
// records what clients would observe. Its traces are, by construction,
// explained by the spec: the soundness tests and checker benchmarks use
// them. Deterministic for a given seed.
//
// Crashed clients (SimOptions::crash_probability, off by default): a
// request may be doomed when it is sent. Its client then gives up on it at
// a later random moment, as a Jepsen client whose operation timed out: the
// trace gets a `timeout` for every request still outstanding on that
// connection, then `closed`, and the client carries on with its next
// request on a fresh connection. The request is never answered, but the
// server may have taken it before the crash (its response is dropped),
// take it at any later moment, or never (it was lost with the connection).
#ifndef DUALSWARM_ENGINE_HARNESS_SIMULATOR_H_
#define DUALSWARM_ENGINE_HARNESS_SIMULATOR_H_

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/check/observation.h"
#include "engine/harness/random_server.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"

namespace dualswarm::harness {

// Produces the next request a client sends (the spec's message IR).
using RequestFn = std::function<ir::Value(Rng&)>;

struct SimOptions {
  int connections = 4;
  int requests = 100;     // requests sent in total
  int max_in_flight = 1;  // per connection (pipelining when > 1)
  uint64_t seed = 1;
  // Which node each connection reaches (what node_of(c) answers).
  lang::ConnectionNodes connection_nodes;
  // Probability that the trace is cut short with some requests unanswered.
  double truncate_probability = 0.2;
  // Strings a `fresh string` may become (a few, so values repeat).
  std::vector<std::string> fresh_strings = {"\"a1\"", "\"b2\"", "W/\"c3\"", "\"d4\"", "x"};

  // Crashed clients (all off by default; with crash_probability 0 the
  // traces are exactly those of a simulator without crashes).
  // Probability that a request is never answered (its client crashes while
  // it is in flight). A client sends nothing more on a connection that has
  // a doomed request in flight.
  double crash_probability = 0;
  // At the crash, each request of the connection the server has not taken
  // yet is lost (never taken) with this probability; once one is lost, so
  // are the ones sent after it (TCP: a later request cannot arrive without
  // the earlier ones). Requests not lost are taken at a later random moment.
  double crash_lost_probability = 0.5;
  // After a crash the client reconnects under the same connection number
  // (a number names a new connection after `closed`) instead of a new one
  // (connections, connections + 1, ... in crash order).
  bool crash_reuse_conn = false;

  // Fault events (off by default): before each action, with this
  // probability the trace gets a fault event drawn from `faults` (each
  // {"fault": NAME, ...}; empty: {"fault": "kill", "node": 0}) and, when
  // the spec has `on fault`, its handler runs on the server's state at
  // that moment, as the checker assumes (docs/checker.md: faults).
  double fault_probability = 0;
  std::vector<ir::Value> faults;
};

// What became of the requests crashed clients never got an answer to.
struct SimStats {
  int crashes = 0;
  int never_answered = 0;      // requests outstanding at a crash (each got a `timeout`)
  int taken_before_crash = 0;  // the server had applied them; the response was dropped
  int taken_after_crash = 0;   // the server applied them after the `closed`
  int lost = 0;                // never applied (lost with the connection)
};

absl::StatusOr<std::vector<check::Observation>> Simulate(const lang::Spec& spec, const RequestFn& next_request,
                                                         const SimOptions& opts, SimStats* stats = nullptr);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_SIMULATOR_H_
