// The worker daemon: registers with the coordinator, long-polls for jobs
// that match its adapters and labels, runs each leased job in its own child
// process (JobProcess), heartbeats their progress (which extends the
// leases and brings back cancellations), and reports each result with
// CompleteJob — retrying with backoff while the coordinator is unreachable,
// so a coordinator restart loses nothing. On stop it leases no more, lets
// running jobs finish for a bounded time, then abandons them cleanly (their
// SUTs are torn down; their leases expire and the jobs go to another
// worker).
#ifndef DUALSWARM_WORKERS_DAEMON_DAEMON_H_
#define DUALSWARM_WORKERS_DAEMON_DAEMON_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "workers/adapters/adapter_kinds.h"
#include "workers/daemon/worker_metrics.h"

namespace dualswarm::workers {

// The word a worker lists among its adapters to take the jobs of explore
// runs (docs/explore.md): the coordinator's built-in target of explore
// runs has it as its adapter.
inline constexpr char kExploreAdapter[] = "explore";

// What a worker hosts unless told otherwise: every adapter kind, and
// explore runs.
inline std::vector<std::string> DefaultWorkerAdapters() {
  std::vector<std::string> out(kAdapterKinds.begin(), kAdapterKinds.end());
  out.push_back(kExploreAdapter);
  return out;
}

struct DaemonOptions {
  std::string coordinator = "127.0.0.1:7420";  // HOST:PORT
  std::string token;                           // bearer token of role worker (or admin)
  std::string tls_ca;                          // PEM root certificate: use TLS (empty: plaintext)
  std::string name;                            // shown by the coordinator (default: host name)
  int slots = 1;                               // jobs at once
  std::vector<std::string> adapters = DefaultWorkerAdapters();
  std::vector<std::string> labels;  // "k=v"
  std::string work_dir;             // job directories go here (created)
  std::string self_exe;             // this binary, for `run-job` children
  int lease_wait_ms = 2000;         // LeaseJobs long-poll
  double drain_seconds = 30;        // on stop: how long running jobs may finish
  bool keep_job_dirs = false;       // keep job directories of reported jobs
  int shrink_max_reruns = 500;
  double shrink_max_seconds = 60;
  int shrink_jobs = 1;  // candidates rerun at once (shrink_job.h)
  int prelaunch = -1;   // SUTs launched ahead of reruns (ShrinkJobOptions::prelaunch)
  // A job child that shrinks reruns one more candidate at once for every
  // slot of this worker no job holds (slot_tokens.h).
  bool borrow_slots = true;
  double budget_grace_seconds = 10;  // a job running this long past its limits is killed
  double max_job_seconds = 3600;     // limit of a job without a time budget (0: none)
  WorkerMetrics* metrics = nullptr;  // optional
};

// Runs until *stop becomes true (then drains) or *abandon becomes true (then
// stops running jobs at once). Returns the process exit code: 0 after a
// clean stop, 1 when the coordinator refused the token.
int RunDaemon(const DaemonOptions& options, const std::atomic<bool>* stop, const std::atomic<bool>* abandon);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_DAEMON_H_
