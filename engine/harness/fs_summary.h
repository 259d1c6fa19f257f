// One line for a message of the fs adapter (docs/adapters.md: fs), for
// sequence diagrams: an operation on a replica ("write a:f \"1\"",
// "rename a:d -> e", "run") or its answer ("ok", "error ENOENT",
// "exit 2 \"Failed...\"", "tree: d/ d/p=\"1\" l->x"), where the JSON would be
// clipped before it said anything.
#ifndef DUALSWARM_ENGINE_HARNESS_FS_SUMMARY_H_
#define DUALSWARM_ENGINE_HARNESS_FS_SUMMARY_H_

#include <string>

#include "engine/ir/value.h"

namespace dualswarm::harness {

// The summary, or compact JSON for a message that is neither.
std::string SummarizeFsMessage(const ir::Value& m);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_FS_SUMMARY_H_
