// Job process handle: the daemon's side of one `dualswarm-worker run-job`
// child (workers/daemon/job_child.h). Starts it with the lease in a job
// directory, follows its progress lines through a pipe, notices when it
// exits, and turns the exit into the CompleteJob request to report: the
// child's result file, or an ERROR when the tester crashed. Any SUT process
// group the child reported as running when it died is killed, so nothing
// leaks even when the tester is killed hard.
//
// The job's time budget is enforced from outside: the child runs in its own
// process group, and a child still running past its wall-time limit
// (OverrunLimitSeconds: SUT start + budget + grace, plus the shrinking
// budget once it shrinks) is killed with its whole group and its SUTs, and
// the job is reported as an ERROR naming the budget — whatever the child is
// stuck in (a handler computing for ever, a checker that does not look up).
#ifndef DUALSWARM_WORKERS_DAEMON_JOB_PROCESS_H_
#define DUALSWARM_WORKERS_DAEMON_JOB_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "dualswarm/v1/worker.pb.h"

namespace dualswarm::workers {

struct JobProcessOptions {
  std::string self_exe;  // the dualswarm-worker binary (runs `run-job`)
  std::string job_dir;   // created; holds job.pb, result.pb, tester.log and the SUT dirs
  int shrink_max_reruns = 500;
  double shrink_max_seconds = 60;
  int shrink_jobs = 1;
  int prelaunch = -1;  // ShrinkJobOptions::prelaunch
  // Not empty: the worker's slot files (slot_tokens.h), `slots` of them;
  // the child borrows the free ones while it shrinks.
  std::string slot_dir;
  int slots = 0;
  // How long past its limits (SUT readiness timeout + time budget) a job
  // may run before it is killed: teardown, the checker's last observation.
  double grace_seconds = 10;
  // The wall-time limit of a job without a time budget, shrinking included
  // (0: none).
  double max_job_seconds = 3600;
};

// The wall time a job child may take before it is killed: for a job without
// a time budget, options.max_job_seconds (0: no limit); otherwise the SUT's
// readiness timeout (launched targets),
// plus the time budget, plus the grace; once the child reports shrinking,
// also the shrinking budget and one more run (a rerun's SUT start and budget).
double OverrunLimitSeconds(const v1::LeasedJob& job, const JobProcessOptions& options, bool shrinking);

// What the child reported so far.
struct ChildProgress {
  uint64_t sent = 0, received = 0, frontier = 0;
  int shrink_reruns = 0;
  size_t shrink_size = 0;
  int shrink_jobs = 0;     // candidates rerun at once (0: not shrinking yet)
  int borrowed_slots = 0;  // of those, from slots no job held
  bool shrinking = false;
  // From the final stats line.
  uint64_t solver_checks = 0, z3_calls = 0;
  double z3_seconds = 0;
  double check_seconds = 0;        // checker wall time in the job's run
  double max_observe_seconds = 0;  // the checker's longest single observation
  bool have_stats = false;
};

class JobProcess {
 public:
  static absl::StatusOr<std::unique_ptr<JobProcess>> Start(const v1::LeasedJob& job, const JobProcessOptions& options);
  ~JobProcess();  // kills the child and its SUTs if still running

  // Reads the progress lines that arrived and checks whether the child
  // exited; kills it (and its group and SUTs) when it ran past its limit
  // (OverrunLimitSeconds). Returns true while it runs.
  bool Poll();
  // Whether Poll killed the child for running past its limit.
  bool overran() const { return overran_; }
  // Asks the child to stop (SIGTERM: it tears down its SUT and exits).
  void Terminate();
  // SIGKILL to the child's process group and every SUT group it reported;
  // waits for it.
  void Kill();

  const ChildProgress& progress() const { return progress_; }
  pid_t pid() const { return pid_; }
  double seconds() const;
  // After the child exited: the completion to report, or NotFound when the
  // job was cancelled (exit 143/SIGTERM) and there is nothing to report.
  absl::StatusOr<v1::CompleteJobRequest> Result() const;
  // The last bytes of the child's log (tester.log).
  std::string LogTail(size_t max_bytes = 2000) const;

 private:
  JobProcess() = default;
  void ReadProgress();
  void HandleLine(const std::string& line);
  void KillSuts();
  std::string OverrunReason() const;

  v1::LeasedJob job_;
  JobProcessOptions options_;
  pid_t pid_ = -1;
  int progress_fd_ = -1;
  std::string partial_;
  bool exited_ = false;
  bool overran_ = false;
  int wait_status_ = 0;
  int64_t started_ns_ = 0, ended_ns_ = 0;
  ChildProgress progress_;
  std::set<pid_t> live_suts_;
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_JOB_PROCESS_H_
