#include "workers/sut/shell_spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "util/status_macros.h"

namespace dualswarm::workers {
namespace {

// What the child needs, prepared by the parent: between vfork and exec the
// child shares the parent's memory and only makes system calls.
struct ChildArgs {
  const char* command;
  const char* log;
  int log_flags;
  const char* cwd;  // null: stay
  int uid, gid;     // -1: keep
  sigset_t mask;    // the parent's signal mask, restored just before exec
};

[[noreturn]] __attribute__((noinline)) void BecomeCommand(const ChildArgs* a) {
  ::setsid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  int fd = ::open(a->log, a->log_flags, 0644);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (fd > 2) ::close(fd);
  }
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull > 0) {
    ::dup2(devnull, 0);
    ::close(devnull);
  }
  if (a->cwd != nullptr && ::chdir(a->cwd) != 0) ::_exit(127);
  // Raw system calls: glibc's setuid() would signal the parent's threads
  // (it makes every thread of a process change), whose memory this child
  // borrows. Exit 126 ("cannot execute") when the change is refused.
  if (a->gid >= 0 &&
      (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setresgid, a->gid, a->gid, a->gid) != 0))
    ::_exit(126);
  if (a->uid >= 0 && ::syscall(SYS_setresuid, a->uid, a->uid, a->uid) != 0) ::_exit(126);
  ::sigprocmask(SIG_SETMASK, &a->mask, nullptr);
  ::execl("/bin/sh", "sh", "-c", a->command, static_cast<char*>(nullptr));
  ::_exit(127);
}

// Spawns from the calling thread (see SpawnShell).
absl::StatusOr<pid_t> SpawnHere(const ShellCommand& c) {
  ChildArgs args{c.command.c_str(),
                 c.log_path.c_str(),
                 O_WRONLY | O_CREAT | (c.append_log ? O_APPEND : O_TRUNC),
                 c.cwd.empty() ? nullptr : c.cwd.c_str(),
                 c.uid,
                 c.gid,
                 {}};
  // No signal handler may run in the child while it borrows the parent's
  // memory: all are blocked across vfork.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &args.mask);
  pid_t pid = ::vfork();
  if (pid == 0) BecomeCommand(&args);
  const int spawn_errno = errno;
  pthread_sigmask(SIG_SETMASK, &args.mask, nullptr);
  if (pid < 0) return absl::InternalError(absl::StrCat("vfork: ", std::strerror(spawn_errno)));
  return pid;
}

// The thread every child is spawned from. PR_SET_PDEATHSIG fires when the
// thread that spawned a child exits, not the process: a SUT launched from a
// short-lived thread (a shrinking wave's) would be killed when its wave
// ends, though it is meant to outlive it (a warm SUT, one stopping in the
// background). This thread lives as long as the process, so children die
// with the process and with nothing else. A forked child process (without
// exec) gets its own spawner: threads do not survive fork.
class Spawner {
 public:
  static Spawner& OfThisProcess() {
    static absl::Mutex mu(absl::kConstInit);
    static Spawner* spawner = nullptr;  // guarded by mu
    absl::MutexLock lock(&mu);
    if (spawner == nullptr || spawner->pid_ != ::getpid()) spawner = new Spawner();  // never freed: lives until exit
    return *spawner;
  }

  absl::StatusOr<pid_t> Spawn(const ShellCommand& c) {
    Request request{&c};
    {
      absl::MutexLock lock(&mu_);
      queue_.push_back(&request);
      mu_.Await(absl::Condition(&request.done));
    }
    return request.result;
  }

 private:
  struct Request {
    const ShellCommand* command;
    absl::StatusOr<pid_t> result = absl::UnknownError("not spawned");
    bool done = false;
  };

  Spawner() : pid_(::getpid()) {
    std::thread([this] { Serve(); }).detach();
  }

  void Serve() {
    while (true) {
      Request* r = nullptr;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(
            +[](std::deque<Request*>* q) { return !q->empty(); }, &queue_));
        r = queue_.front();
        queue_.pop_front();
      }
      absl::StatusOr<pid_t> result = SpawnHere(*r->command);
      absl::MutexLock lock(&mu_);
      r->result = std::move(result);
      r->done = true;
    }
  }

  const pid_t pid_;  // the process this spawner's thread belongs to
  absl::Mutex mu_;
  std::deque<Request*> queue_ ABSL_GUARDED_BY(mu_);  // waiting callers' requests
};

}  // namespace

absl::StatusOr<pid_t> SpawnShell(const ShellCommand& c) { return Spawner::OfThisProcess().Spawn(c); }

absl::StatusOr<ShellRun> RunShell(const ShellCommand& c, int timeout_ms) {
  ASSIGN_OR_RETURN(pid_t pid, SpawnShell(c));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  ShellRun run;
  for (auto pause = std::chrono::microseconds(200);; pause = std::min(pause * 2, std::chrono::microseconds(5000))) {
    pid_t r = ::waitpid(pid, &run.status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      const int err = errno;
      ::kill(-pid, SIGKILL);
      return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(err)));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &run.status, 0);
      run.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(pause);
  }
  ::kill(-pid, SIGKILL);  // what it left running in its session
  return run;
}

}  // namespace dualswarm::workers
