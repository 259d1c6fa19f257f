// Starting a command line under /bin/sh as the leader of its own session,
// with its output in a log file and /dev/null as its input: what a
// launched SUT (launcher.h) and an fs target's `run` (fs_adapter.h) both
// need. The child is started with vfork, not fork: a worker's address
// space is large, and copying its page tables for every SUT process cost
// ~30 ms a start on a paravirtualized machine (shrinking starts one per
// candidate). If the thread that spawned it dies, the child is killed
// (PR_SET_PDEATHSIG); its session's other members are the caller's to stop.
// It may run as another user: an unprivileged one, where permissions
// matter (root ignores mode bits).
#ifndef DUALSWARM_WORKERS_SUT_SHELL_SPAWN_H_
#define DUALSWARM_WORKERS_SUT_SHELL_SPAWN_H_

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace dualswarm::workers {

struct ShellCommand {
  std::string command;   // run as `sh -c COMMAND`
  std::string log_path;  // stdout and stderr go here
  bool append_log = false;
  std::string cwd;  // empty: the caller's working directory
  // >= 0: the command runs as this user and group, with no supplementary
  // groups (the caller must be root to give that away).
  int uid = -1;
  int gid = -1;
};

// The child's pid (a session and process-group leader), or an error when
// it could not be started; a command that does not exist is started and
// exits 127.
absl::StatusOr<pid_t> SpawnShell(const ShellCommand& c);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_SHELL_SPAWN_H_
