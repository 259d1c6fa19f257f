// Starting a command line under /bin/sh as the leader of its own session,
// with its output in a log file and /dev/null as its input: what a
// launched SUT (launcher.h) and an fs target's `run` (fs_adapter.h) both
// need. The child is started with vfork, not fork: a worker's address
// space is large, and copying its page tables for every SUT process cost
// ~30 ms a start on a paravirtualized machine (shrinking starts one per
// candidate). Every child is spawned from one thread that lives as long as
// the process, so that the child dies with the process (PR_SET_PDEATHSIG,
// which fires when the spawning *thread* exits) and not with a short-lived
// caller thread; its session's other members are the caller's to stop,
// except with RunShell, which runs a command to its end (a target's reset
// command, an fs target's `run`) and kills whatever it left in its session.
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

// How a command run to its end ended: its wait status, or the timeout.
struct ShellRun {
  int status = 0;  // waitpid's status when !timed_out
  bool timed_out = false;
};
// Runs `c` until it exits or `timeout_ms` passed (its session is then
// killed); either way, whatever it left running in its session is killed.
absl::StatusOr<ShellRun> RunShell(const ShellCommand& c, int timeout_ms);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_SHELL_SPAWN_H_
