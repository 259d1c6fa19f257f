// Faults: the faults a cluster run may inject and record in its trace
// ({"event":"fault","fault":NAME,"node":N}; docs/trace-format.md,
// docs/clusters.md), the action that ends each, and which links between
// nodes a partition cuts. One list for the nemesis that draws faults, the
// runner that applies them, and the loader that checks a saved
// counterexample's.
#ifndef DUALSWARM_ENGINE_HARNESS_FAULTS_H_
#define DUALSWARM_ENGINE_HARNESS_FAULTS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dualswarm::harness {

// How long a `slow` fault delays each message on its node's links.
inline constexpr int kSlowLinkDelayMs = 100;

struct FaultKind {
  std::string_view fault;  // what injects it ("pause")
  std::string_view heal;   // what ends it ("resume")
  int min_nodes;           // the smallest cluster where it means something
};

// pause/resume, kill/restart, partition/heal (one node cut off from the
// others), split/heal (a minority from a majority), bridge/heal (two
// halves that reach each other only through one node), slow/heal (every
// message between a node and the others delayed by kSlowLinkDelayMs).
const std::vector<FaultKind>& FaultKinds();
// The kind `fault` injects; nullptr when it is not a fault (a heal, or
// unknown).
const FaultKind* FaultKindOf(std::string_view fault);
// Whether `action` injects or ends a fault.
bool IsFaultAction(std::string_view action);
// Every action, for error messages: "pause, resume, kill, ...".
std::string FaultActionNames();

// The links between nodes that partition `fault` on `node` cuts in a
// cluster of `nodes`, each as (a, b) with a < b, both directions cut:
//   partition: `node` from every other node;
//   split:     the m = (nodes-1)/2 nodes node, node+1, ... (mod nodes)
//              from the rest, a minority from a majority;
//   bridge:    the other nodes in ring order from node+1, the first half
//              from the second; `node` still reaches both (Jepsen's
//              bridge: two majorities that overlap in one node).
// A function of (node, nodes) alone, so a trace's fault event replays.
// Empty for the other faults.
std::vector<std::pair<int, int>> LinksCut(std::string_view fault, int node, int nodes);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_FAULTS_H_
