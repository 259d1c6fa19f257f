// Turns a failed job into a counterexample: shrinks its input by rerunning
// candidates against fresh SUTs (each rerun is a RunJob that launches the
// SUT anew), sending each candidate of a possible race many times over in
// one run (engine/harness/repetition.h), and replays counterexamples.
#ifndef DUALSWARM_WORKERS_RUNNER_SHRINK_JOB_H_
#define DUALSWARM_WORKERS_RUNNER_SHRINK_JOB_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/harness/counterexample.h"
#include "engine/harness/shrinker.h"
#include "workers/runner/runner.h"

namespace dualswarm::workers {

// The most candidates rerun at once (ShrinkJobOptions::jobs).
inline constexpr int kMaxShrinkJobs = 16;

struct ShrinkJobOptions {
  bool shrink = true;  // false: report the unshrunk input
  int max_reruns = 500;
  double max_seconds = 60;
  int attempts = 2;  // failed reruns before a candidate is discarded
  int confirm = 3;   // reproductions before a candidate is kept
  int verify = 5;    // replays of the result that measure its replay rate
  // Candidates (and verification replays) run at once, each on its own
  // fresh SUT: waiting for a liveness timeout or a slow SUT start then
  // overlaps. The counterexample is the same for a deterministic SUT.
  int jobs = 1;
  // Not empty: candidates reuse running SUTs, reset by this command
  // between reruns (workers/sut/warm_suts.h), instead of launching one
  // each; it must exit 0 within `reset_timeout_ms`. Verification replays
  // still launch fresh SUTs.
  std::string reset_command;
  int reset_timeout_ms = 10000;
  // Without a reset command, where the spec declares a `partition`:
  // candidates reuse running SUTs with their requests' paths or keys
  // renamed to partitions no run touched (engine/harness/fresh_resources.h);
  // a candidate that cannot be renamed so gets a fresh SUT.
  bool reuse_by_partition = true;
  // Fresh SUTs launched ahead of the reruns that need one
  // (workers/sut/spare_suts.h), so that a slow start overlaps earlier
  // candidates' runs: at most this many starting or waiting at once (from
  // `jobs` on, more while reruns wait for them); -1: max(4, jobs); 0: each
  // rerun launches its own.
  int prelaunch = -1;
  // After every rerun and verification replay; the counts cover the
  // whole job (every shrink pass), not one pass.
  std::function<void(const harness::ShrinkProgress&)> on_progress;
};

// The checker's or runner's verdict in counterexample form.
harness::Verdict VerdictOf(const JobResult& r);

// Builds (and, when possible, shrinks) the counterexample of a failed job.
// Shrinking needs a launch command (a fresh SUT per rerun); with a running
// target the input is reported unshrunk.
absl::StatusOr<harness::Counterexample> MakeCounterexample(std::shared_ptr<const lang::Spec> spec,
                                                           const JobOptions& job, const JobResult& result,
                                                           const ShrinkJobOptions& options);

// Job options that rerun exactly `input` with the counterexample's settings.
JobOptions ReplayOptions(const harness::Counterexample& cx, const std::vector<harness::InputItem>& input);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_RUNNER_SHRINK_JOB_H_
