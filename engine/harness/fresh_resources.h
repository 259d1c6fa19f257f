// FreshResources: a shrinking candidate renamed to act on resources no
// earlier run touched, so that it can run on a server earlier candidates
// left state in (workers/sut/warm_suts.h) instead of on a freshly launched
// one. A spec that declares `partition q => KEY` says that requests with
// different keys touch disjoint state (P-compositionality); a request
// whose partition key no earlier request had meets the state a fresh
// server starts with. Each request's `path` (HTTP) or `key` field gets a
// suffix "~w" + a token unique to the run, replacing the suffix an earlier
// rename gave it; the rename is used only when the spec's partition key of
// every renamed request carries the token, and requests shared a key
// after the rename exactly when they did before (so the candidate's own
// partitions are those it had).
#ifndef DUALSWARM_ENGINE_HARNESS_FRESH_RESOURCES_H_
#define DUALSWARM_ENGINE_HARNESS_FRESH_RESOURCES_H_

#include <optional>
#include <string>
#include <vector>

#include "engine/harness/executor.h"
#include "engine/lang/interp.h"

namespace dualswarm::harness {

// `input` with every request's resource renamed for the run named by
// `token` (digits); nullopt when the rename cannot promise fresh
// partitions: the spec has no partition, a request (or a fault) has no
// literal `path` or `key` string, one whose suffix would not make a name
// of its own (a URI with a query or fragment, a path ending in "/", a name
// of over 200 bytes), or the keys do not behave as above.
std::optional<std::vector<InputItem>> WithFreshResources(const std::vector<InputItem>& input, const lang::Spec& spec,
                                                         const std::string& token);

// `input` with the suffixes WithFreshResources gave taken off again (the
// names a counterexample shows).
std::vector<InputItem> WithoutFreshSuffixes(std::vector<InputItem> input);
// Whether some path or key of `input` ends like a renamed one ("~w" and
// digits): an input found so cannot be renamed and named back faithfully.
bool HasFreshSuffixes(const std::vector<InputItem>& input);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_FRESH_RESOURCES_H_
