// Nemesis: faults injected into a launched cluster (workers/sut/cluster.h)
// while a job runs, at times drawn from the job's seed — so a rerun of the
// job (a replay, a shrinking candidate) injects the same faults at the same
// offsets from its start, and a swarm's jobs each get their own schedule.
// The gap before a fault counts from when the last heal was handed out, so
// a slow heal (a restart waits until the node is ready) shifts what follows
// instead of bunching faults together.
//
// Faults so far:
//   "pause"  SIGSTOP a node, SIGCONT it `duration_ms` later ("resume");
//   "kill"   SIGKILL a node, run its command again `duration_ms` later
//            ("restart"): what it did not write to disk is gone;
//   "partition" cut a node off from every other node (link relays,
//            workers/sut/link_relay.h; clients still reach it), heal it
//            `duration_ms` later ("heal"). For a cluster of 3 that is
//            every majority/minority split;
//   "split"  cut a minority from a majority, "bridge" two halves that
//            reach each other only through one node (3 nodes or more;
//            which links: harness::LinksCut), healed by "heal";
//   "slow"   delay every message between a node and the others by
//            harness::kSlowLinkDelayMs, healed by "heal".
// A fault must end before the response timeout, so that it delays answers
// without making the server look dead (NemesisOptions::Check). Each fault
// and each heal is a fault event in the trace ({"fault":"pause","node":1},
// {"fault":"resume","node":1}; docs/trace-format.md).
#ifndef DUALSWARM_WORKERS_RUNNER_NEMESIS_H_
#define DUALSWARM_WORKERS_RUNNER_NEMESIS_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace dualswarm::workers {

struct NemesisOptions {
  std::vector<std::string> faults;  // of kNemesisFaults; empty: no nemesis
  int64_t interval_ms = 1000;       // mean time from a heal to the next fault
  int64_t duration_ms = 300;        // how long a fault lasts
  // InvalidArgument for an unknown fault, or durations that are not
  // positive or not shorter than the response timeout.
  absl::Status Check(int64_t response_timeout_ms) const;
  // InvalidArgument for a fault a cluster of `nodes` is too small for.
  absl::Status CheckNodes(int nodes) const;
};

// The faults a nemesis may inject (harness::FaultKinds).
const std::vector<std::string>& NemesisFaults();
// Whether `faults` cut links (partition, split, bridge): the cluster
// needs link relays (workers/sut/link_relay.h).
bool NeedsLinkRelays(const std::vector<std::string>& faults);

// A swarm job's faults: a non-empty subset of `faults` drawn from `seed`
// (each kept with probability 1/2), so that the jobs of a swarm stress
// different mixes (a partition-only job, a kill-only one, ...) the way
// feature masks vary what gen blocks send. One fault or none: unchanged.
std::vector<std::string> SwarmFaults(const std::vector<std::string>& faults, uint64_t seed);

// One step of the schedule: a fault ("pause", "kill", "partition", ...) or
// its heal ("resume", "restart", "heal") on a node, `at_ns` after the job
// started.
struct FaultAction {
  int64_t at_ns = 0;
  std::string action;
  int node = 0;
};

class Nemesis {
 public:
  Nemesis(const NemesisOptions& options, uint64_t seed, int nodes);
  // The actions due at `now_ns` (since the job started) not returned
  // before, in order. Every fault's heal comes before the next fault.
  std::vector<FaultAction> Due(int64_t now_ns);
  // The heals of faults still in force (to run at the end of the job).
  std::vector<FaultAction> Pending() const;

 private:
  void PlanNext(int64_t after_ns);

  NemesisOptions options_;
  int nodes_;
  std::mt19937_64 rng_;
  std::vector<FaultAction> planned_;  // the next fault and its heal
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_RUNNER_NEMESIS_H_
