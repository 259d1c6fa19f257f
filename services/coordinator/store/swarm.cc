#include "services/coordinator/store/swarm.h"

#include "absl/container/flat_hash_set.h"
#include "engine/check/checker.h"
#include "engine/harness/executor.h"

namespace dualswarm::coord {

uint64_t MixSeed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<SwarmJob> ExpandSwarm(uint64_t run_seed, int jobs, int choice_sites) {
  static constexpr check::BranchOrder kOrders[] = {check::BranchOrder::kFirst, check::BranchOrder::kLast,
                                                   check::BranchOrder::kRandom, check::BranchOrder::kMostConstrained};
  std::vector<SwarmJob> out;
  if (jobs <= 0) return out;
  out.reserve(static_cast<size_t>(jobs));
  absl::flat_hash_set<std::string> masks;
  for (int i = 0; i < jobs; ++i) {
    SwarmJob job;
    // run_seed + i is distinct for distinct i (mod 2^64); MixSeed is a
    // bijection. Seeds keep to 63 bits so every tool that takes a seed
    // (`dualswarm test --seed`, counterexample JSON) can take them.
    job.seed = MixSeed(run_seed + static_cast<uint64_t>(i)) & 0x7fffffffffffffffull;
    job.branch_order = check::BranchOrderName(kOrders[i % 4]);
    if (i > 0 && choice_sites > 0) {
      // Redraw a mask that another job already has (bounded: a small mask
      // space may not hold `jobs` distinct masks).
      uint64_t mask_seed = job.seed;
      for (int tries = 0; tries < 32; ++tries) {
        job.feature_mask = harness::FeatureMask::Random(mask_seed, choice_sites).ToString();
        if (!masks.contains(job.feature_mask)) break;
        mask_seed = MixSeed(mask_seed);
      }
    }
    masks.insert(job.feature_mask);
    out.push_back(std::move(job));
  }
  return out;
}

}  // namespace dualswarm::coord
