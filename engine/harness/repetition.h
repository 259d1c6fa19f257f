// Repetition: a race that shows in one run of a few requests out of
// hundreds is made to show in one run by sending those requests many
// times over. An input `core` repeated k times is core's requests, then
// core's again once all of the first round's responses arrived, and so on
// (each round keeps the core's overlap and causal order; references move
// with the messages they name). A run of it is folded back onto the core:
// the round in which the failure showed, relabelled as if it were the
// whole run, so shrinking, signatures and diagrams see a core-sized input.
#ifndef DUALSWARM_ENGINE_HARNESS_REPETITION_H_
#define DUALSWARM_ENGINE_HARNESS_REPETITION_H_

#include <cstddef>
#include <vector>

#include "engine/harness/executor.h"
#include "engine/harness/shrinker.h"

namespace dualswarm::harness {

// `core` sent `times` times in a row (times < 2: core itself).
std::vector<InputItem> Repeated(const std::vector<InputItem>& core, int times);

// A run of Repeated(core, k) seen as a run of the core: `sent` is what round
// 0 sent when it failed there and empty when a later round failed (that
// failure may need any request of the core, under the core's own waits);
// the trace is the failing round's observations (and the events without a
// label among them), labelled as the core's. The round is 0 when
// the verdict names no request. Returns the round (also in run->round).
int FoldRepeated(size_t core_size, RerunOutcome* run);

// The requests a race at input position `failing` involves: the failing
// request, those sent while it was outstanding (its response had not
// arrived) and those whose responses had not arrived when it was sent, on
// its resource (`path` or `key`; all when it names none), plus up to
// `before` earlier requests on that resource that set it up and the first
// request on it (which made it, on the server the input began with); at
// most `max_size` in all, the latest kept (and that first one). In input
// order, as an input of its own (waits and references renumbered).
std::vector<InputItem> RaceWindow(const std::vector<InputItem>& input, int failing, size_t before, size_t max_size);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_REPETITION_H_
