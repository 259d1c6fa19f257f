// Explore jobs: a leased job whose budget asks for model checking
// (JobBudget.explore_depth > 0) runs `dualswarm explore` on the spec
// instead of testing a target (docs/explore.md, "In the service"). Jobs of
// one run differ by the order they try a state's requests in: the run's
// first job as the gen block enumerates them (its branch order `first`),
// the second reversed (`last`), every other one a permutation drawn from
// its own seed, so that a swarm covers what one job cannot within its
// budget. Each job stops at its first violation and
// reports it as a finding whose input is the request sequence that led to
// it (one request at a time on connection 0).
#ifndef DUALSWARM_WORKERS_DAEMON_EXPLORE_JOB_H_
#define DUALSWARM_WORKERS_DAEMON_EXPLORE_JOB_H_

#include <atomic>

#include "absl/status/statusor.h"
#include "dualswarm/v1/worker.pb.h"
#include "engine/explore/explorer.h"
#include "engine/lang/spec.h"

namespace dualswarm::workers {

// Whether `job` is an explore job.
bool IsExploreJob(const v1::LeasedJob& job);

// The explorer's options for `job` (its gen, depth, state bound, time
// budget, order and seed), with `cancel`. INVALID_ARGUMENT for bounds the
// coordinator would not have sent.
absl::StatusOr<explore::ExploreOptions> ExploreOptionsFor(const v1::LeasedJob& job, const std::atomic<bool>* cancel);

// The CompleteJob request for an explore job that ran: FAILED with the
// first violation as its counterexample (kind spec-error for a failed
// `assert`, a spec error or a deadlock; property for a monitor), PASSED
// when the search covered everything within the depth, INCONCLUSIVE when
// a bound (states, time, the request alphabet's) cut it short.
v1::CompleteJobRequest CompletionForExplore(const v1::LeasedJob& job, const lang::Spec& spec,
                                            const explore::ExploreResult& result);

// Runs `job` (an explore job) to its completion; errors (the spec does not
// load, cannot be explored) are completions with outcome ERROR.
v1::CompleteJobRequest RunExploreJob(const v1::LeasedJob& job, const std::atomic<bool>* cancel);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_EXPLORE_JOB_H_
