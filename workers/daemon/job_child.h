// The job process: what `dualswarm-worker run-job` does in the child the
// daemon starts for every leased job. It reads the lease (a serialized
// v1::LeasedJob), runs the tester, shrinks a failure into a counterexample,
// and writes the CompleteJob request (serialized v1::CompleteJobRequest) to
// a result file. Running each job in its own process means a crashing
// tester or a wedged SUT never takes the daemon down.
//
// Progress goes to a file descriptor as JSON lines, one object per line:
//   {"sent":N,"received":N,"frontier":N}        about once a second
//   {"sut":PGID,"up":true|false}                a SUT process group started/stopped
//   {"shrink_reruns":N,"size":N}                while shrinking
//   {"stats":{"solver_checks":N,"z3_calls":N,"z3_us":N,"shrink_reruns":N}}  at the end
// SIGTERM (or the daemon's death: PR_SET_PDEATHSIG) cancels the job: the
// SUT is torn down and the process exits with code 143 and no result.
#ifndef DUALSWARM_WORKERS_DAEMON_JOB_CHILD_H_
#define DUALSWARM_WORKERS_DAEMON_JOB_CHILD_H_

#include <string>

namespace dualswarm::workers {

struct JobChildOptions {
  std::string job_file;     // serialized v1::LeasedJob
  std::string result_file;  // where the v1::CompleteJobRequest goes
  std::string work_root;    // launched SUTs get fresh directories under this
  int progress_fd = 1;      // JSON lines (see above)
  int shrink_max_reruns = 500;
  double shrink_max_seconds = 60;
  int shrink_jobs = 1;
  int prelaunch = -1;  // ShrinkJobOptions::prelaunch
  // Not empty: the worker's slot files (slot_tokens.h); shrinking borrows
  // the free ones, one more candidate at once each.
  std::string slot_dir;
  int slots = 0;
};

// Returns the process exit code: 0 result written, 143 cancelled, 2 bad
// arguments or unreadable job file.
int RunJobChild(const JobChildOptions& options);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_JOB_CHILD_H_
