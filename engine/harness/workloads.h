// Request generators for the shipped specs, used where traces are made by
// the simulator (soundness tests, checker benchmarks) rather than by a
// spec's own `gen` block.
#ifndef DUALSWARM_ENGINE_HARNESS_WORKLOADS_H_
#define DUALSWARM_ENGINE_HARNESS_WORKLOADS_H_

#include <string>
#include <vector>

#include "engine/harness/simulator.h"

namespace dualswarm::harness {

// Uniformly random get / put / append / cas requests of specs/kv.dspec
// over `keys` (values from {x, y, z}; a third of cas expect null).
RequestFn KvRequests(std::vector<std::string> keys);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_WORKLOADS_H_
