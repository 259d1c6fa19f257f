// Swarm expansion: turns one run (a base seed and a size) into the jobs a
// swarm runs — each with its own seed, branch order and feature mask — so
// that different jobs explore differently and any single job can be
// replayed exactly from its row.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_SWARM_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_SWARM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dualswarm::coord {

struct SwarmJob {
  uint64_t seed = 0;
  std::string branch_order;  // engine/check BranchOrderName: first | last | random | most-constrained
  std::string feature_mask;  // engine/harness FeatureMask::ToString ("" = every alternative on)
};

// `jobs` jobs for a run with base seed `run_seed` over a spec whose gen has
// `choice_sites` choice sites. Guarantees:
//  * seeds are pairwise distinct in practice (a bijective mix of run_seed +
//    index, cut to 63 bits so `dualswarm test --seed` takes them);
//  * branch orders cycle through first, last, random, most-constrained;
//  * job 0 has the empty mask (every feature on); the others get random
//    masks (each alternative off with probability 1/3), pairwise distinct
//    whenever the mask space allows it (it does not for choice_sites == 0,
//    where every mask is empty).
// Deterministic: the same arguments give the same jobs.
std::vector<SwarmJob> ExpandSwarm(uint64_t run_seed, int jobs, int choice_sites);

// SplitMix64's finaliser: a bijection on 64-bit values.
uint64_t MixSeed(uint64_t x);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_SWARM_H_
