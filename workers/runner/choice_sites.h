// The choice sites of a spec's gen blocks — each `oneof`/`freq`, numbered
// in order of appearance as the loader numbers them — and the check that a
// feature mask (harness::FeatureMask, "SITE:HEXBITS,...") names only sites
// the spec has. A mask entry for a site that does not exist used to be
// ignored silently, so a typo tested with nothing switched off. Used by
// `dualswarm test --feature-mask` and by the worker when it plans a job.
#ifndef DUALSWARM_WORKERS_RUNNER_CHOICE_SITES_H_
#define DUALSWARM_WORKERS_RUNNER_CHOICE_SITES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "engine/harness/executor.h"
#include "engine/lang/spec.h"

namespace dualswarm::workers {

struct ChoiceSite {
  int number = 0;        // the SITE of a mask entry
  std::string where;     // "kv.dspec:53:5 (oneof in gen request)"
  int alternatives = 0;  // bit i of the entry switches off alternative i
};

// Every site of `spec`, by number.
std::vector<ChoiceSite> ChoiceSites(const lang::Spec& spec);

// INVALID_ARGUMENT naming the spec's sites when `mask` has an entry for a
// site the spec does not have. (Bits past a site's alternatives are allowed
// and do nothing: swarm masks set 16 bits per site.)
absl::Status CheckFeatureMask(const lang::Spec& spec, const harness::FeatureMask& mask);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_RUNNER_CHOICE_SITES_H_
