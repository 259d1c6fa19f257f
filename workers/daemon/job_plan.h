// Job plan: turns a job leased from the coordinator (v1::LeasedJob: spec
// source, target profile with a grpc target's descriptor set and a cluster
// target's nodes, swarm parameters, budget) into the runner's JobOptions,
// and a job's result (outcome, counterexample) into the CompleteJob request
// the worker reports. Pure conversions, no I/O besides loading the spec
// from the source carried in the lease.
#ifndef DUALSWARM_WORKERS_DAEMON_JOB_PLAN_H_
#define DUALSWARM_WORKERS_DAEMON_JOB_PLAN_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "dualswarm/v1/worker.pb.h"
#include "engine/harness/counterexample.h"
#include "engine/lang/spec.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {

struct JobPlan {
  std::shared_ptr<const lang::Spec> spec;
  JobOptions options;  // cancel and on_progress are left for the caller;
                       // ready_probe is the target's, checked
  // The target's reset command: shrinking reruns reuse running SUTs reset
  // by it (ShrinkJobOptions::reset_command); empty: relaunch.
  std::string reset_command;
};

// INVALID_ARGUMENT when the lease cannot be run as it is: the spec does not
// load, the target has neither launch command nor address, an unknown
// adapter or readiness probe, a malformed feature mask or budget.
absl::StatusOr<JobPlan> PlanJob(const v1::LeasedJob& job, const std::string& work_root);

// The CompleteJob request for a job that ran: PASSED, INCONCLUSIVE, or
// FAILED with the counterexample (`cx` must be set for findings).
v1::CompleteJobRequest CompletionForResult(const v1::LeasedJob& job, const JobResult& result,
                                           const harness::Counterexample* cx);
// The CompleteJob request for a job that could not run (the SUT would not
// start, the lease was malformed, the tester crashed): ERROR with `why`.
v1::CompleteJobRequest CompletionForError(const v1::LeasedJob& job, const std::string& why, double seconds);

// Whether a runner outcome is a finding the coordinator groups.
bool IsFinding(Outcome o);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_JOB_PLAN_H_
