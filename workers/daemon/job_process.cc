#include "workers/daemon/job_process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/ir/json.h"
#include "util/file_tail.h"
#include "workers/daemon/job_plan.h"

extern char** environ;

namespace dualswarm::workers {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int kChildProgressFd = 3;

}  // namespace

double OverrunLimitSeconds(const v1::LeasedJob& job, const JobProcessOptions& options, bool shrinking) {
  if (job.budget().time_budget_ms() <= 0) return options.max_job_seconds;  // whole job, shrinking included
  double ready = 0;
  if (!job.target().launch().empty())
    ready = job.target().readiness().timeout_ms() > 0 ? job.target().readiness().timeout_ms() / 1000.0 : 10.0;
  double run = ready + static_cast<double>(job.budget().time_budget_ms()) / 1000.0;
  double limit = run + options.grace_seconds;
  if (shrinking) limit += options.shrink_max_seconds + run;
  return limit;
}

absl::StatusOr<std::unique_ptr<JobProcess>> JobProcess::Start(const v1::LeasedJob& job,
                                                              const JobProcessOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.job_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", options.job_dir, ": ", ec.message()));
  std::string job_file = options.job_dir + "/job.pb";
  {
    std::ofstream out(job_file, std::ios::binary | std::ios::trunc);
    if (!out || !job.SerializeToOstream(&out)) return absl::InternalError(absl::StrCat("cannot write ", job_file));
  }
  std::string result_file = options.job_dir + "/result.pb";
  std::filesystem::remove(result_file, ec);
  std::string log_file = options.job_dir + "/tester.log";

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  // Keep the write end away from fd 3 so dup2 in the child really copies it
  // (a dup2 onto itself would keep FD_CLOEXEC).
  int wfd = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
  ::close(fds[1]);
  if (wfd < 0) {
    ::close(fds[0]);
    return absl::InternalError(absl::StrCat("fcntl: ", std::strerror(errno)));
  }
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  std::vector<std::string> argv = {options.self_exe,  "run-job",
                                   "--job",           job_file,
                                   "--out",           result_file,
                                   "--work-root",     options.job_dir,
                                   "--progress-fd",   absl::StrCat(kChildProgressFd),
                                   "--shrink-reruns", absl::StrCat(options.shrink_max_reruns),
                                   "--shrink-time",   absl::StrCat(options.shrink_max_seconds),
                                   "--shrink-jobs",   absl::StrCat(options.shrink_jobs),
                                   "--prelaunch",     absl::StrCat(options.prelaunch)};
  if (!options.slot_dir.empty()) {
    argv.insert(argv.end(), {"--slot-dir", options.slot_dir, "--slots", absl::StrCat(options.slots)});
  }
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_adddup2(&fa, wfd, kChildProgressFd);
  // The daemon blocks SIGINT/SIGTERM in its threads (a signal thread takes
  // them); the child must get them.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // Its own process group: a child past its budget is killed with everything
  // it started (SUTs are in sessions of their own and reported separately).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  std::unique_ptr<JobProcess> p(new JobProcess());
  p->job_ = job;
  p->options_ = options;
  int rc = ::posix_spawn(&p->pid_, options.self_exe.c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(wfd);
  if (rc != 0) {
    ::close(fds[0]);
    p->pid_ = -1;
    return absl::InternalError(absl::StrCat("cannot start ", options.self_exe, ": ", std::strerror(rc)));
  }
  p->progress_fd_ = fds[0];
  p->started_ns_ = NowNs();
  return p;
}

JobProcess::~JobProcess() {
  if (!exited_) Kill();
  if (progress_fd_ >= 0) ::close(progress_fd_);
}

double JobProcess::seconds() const { return static_cast<double>((exited_ ? ended_ns_ : NowNs()) - started_ns_) / 1e9; }

void JobProcess::HandleLine(const std::string& line) {
  auto v = ir::ParseJson(line);
  if (!v.ok() || !v->is_map()) return;
  auto num = [&](const ir::Value& m, const char* key, uint64_t* out) {
    const ir::Value* f = m.Find(key);
    if (f != nullptr && f->is_int()) *out = static_cast<uint64_t>(f->as_int());
  };
  if (const ir::Value* sut = v->Find("sut"); sut != nullptr && sut->is_int()) {
    const ir::Value* up = v->Find("up");
    pid_t pgid = static_cast<pid_t>(sut->as_int());
    if (up != nullptr && up->is_bool() && up->as_bool()) {
      live_suts_.insert(pgid);
    } else {
      live_suts_.erase(pgid);
    }
    return;
  }
  if (const ir::Value* stats = v->Find("stats"); stats != nullptr && stats->is_map()) {
    num(*stats, "solver_checks", &progress_.solver_checks);
    num(*stats, "z3_calls", &progress_.z3_calls);
    uint64_t z3_us = 0;
    num(*stats, "z3_us", &z3_us);
    progress_.z3_seconds = static_cast<double>(z3_us) / 1e6;
    uint64_t check_us = 0, max_observe_us = 0;
    num(*stats, "check_us", &check_us);
    num(*stats, "max_observe_us", &max_observe_us);
    progress_.check_seconds = static_cast<double>(check_us) / 1e6;
    progress_.max_observe_seconds = static_cast<double>(max_observe_us) / 1e6;
    uint64_t reruns = 0;
    num(*stats, "shrink_reruns", &reruns);
    progress_.shrink_reruns = static_cast<int>(reruns);
    progress_.have_stats = true;
    return;
  }
  if (v->Find("shrink_jobs") != nullptr) {
    uint64_t jobs = 0, borrowed = 0;
    num(*v, "shrink_jobs", &jobs);
    num(*v, "borrowed_slots", &borrowed);
    progress_.shrink_jobs = static_cast<int>(jobs);
    progress_.borrowed_slots = static_cast<int>(borrowed);
    return;
  }
  if (v->Find("shrink_reruns") != nullptr) {
    uint64_t reruns = 0, size = 0;
    num(*v, "shrink_reruns", &reruns);
    num(*v, "size", &size);
    progress_.shrinking = true;
    progress_.shrink_reruns = static_cast<int>(reruns);
    progress_.shrink_size = size;
    return;
  }
  num(*v, "sent", &progress_.sent);
  num(*v, "received", &progress_.received);
  num(*v, "frontier", &progress_.frontier);
}

void JobProcess::ReadProgress() {
  if (progress_fd_ < 0) return;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(progress_fd_, buf, sizeof buf);
    if (n > 0) {
      partial_.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = partial_.find('\n')) != std::string::npos) {
        HandleLine(partial_.substr(0, nl));
        partial_.erase(0, nl + 1);
      }
      continue;
    }
    if (n == 0) {  // every writer closed
      ::close(progress_fd_);
      progress_fd_ = -1;
    }
    return;  // EAGAIN or EOF
  }
}

bool JobProcess::Poll() {
  ReadProgress();
  if (exited_) return false;
  int st = 0;
  pid_t r = ::waitpid(pid_, &st, WNOHANG);
  if (r == 0) {
    double limit = OverrunLimitSeconds(job_, options_, progress_.shrinking);
    if (limit <= 0 || seconds() <= limit) return true;
    overran_ = true;
    Kill();
    return false;
  }
  exited_ = true;
  wait_status_ = st;
  ended_ns_ = NowNs();
  ReadProgress();
  KillSuts();
  return false;
}

void JobProcess::KillSuts() {
  // Groups the child started and did not stop: it died before it could.
  for (pid_t pgid : live_suts_)
    if (pgid > 1) ::kill(-pgid, SIGKILL);
  live_suts_.clear();
}

void JobProcess::Terminate() {
  if (!exited_ && pid_ > 0) ::kill(pid_, SIGTERM);
}

void JobProcess::Kill() {
  if (!exited_ && pid_ > 1) {
    ::kill(-pid_, SIGKILL);  // the child's group: the child and any helper it forked
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &wait_status_, 0);
    exited_ = true;
    ended_ns_ = NowNs();
  }
  ReadProgress();
  KillSuts();
}

std::string JobProcess::OverrunReason() const {
  const v1::LeasedJob& j = job_;
  if (j.budget().time_budget_ms() <= 0)
    return absl::StrCat("timed out: the job has no time budget and ran past the worker's limit for such jobs (",
                        options_.max_job_seconds,
                        " s, dualswarm-worker --max-job-seconds); the worker killed it "
                        "and its SUTs. Not a finding against the SUT; give the run a time budget. Log tail:\n",
                        LogTail(1500));
  std::string limits = absl::StrCat("time budget of ", j.budget().time_budget_ms(), " ms");
  if (!j.target().launch().empty())
    absl::StrAppend(&limits, " + SUT readiness timeout of ",
                    j.target().readiness().timeout_ms() > 0 ? j.target().readiness().timeout_ms() : 10000, " ms");
  if (progress_.shrinking)
    absl::StrAppend(&limits, " + shrinking budget of ", options_.shrink_max_seconds, " s and one more run");
  absl::StrAppend(&limits, " + ", options_.grace_seconds, " s grace");
  return absl::StrCat("timed out: the job ran past its ", limits, " (", absl::StrFormat("%.1f", seconds()),
                      " s) and the worker killed it and its SUTs; the tester did not stop by itself (a spec "
                      "handler or the checker computing for too long?). Not a finding against the SUT. Log tail:\n",
                      LogTail(1500));
}

std::string JobProcess::LogTail(size_t max_bytes) const {
  return util::ReadFileTail(options_.job_dir + "/tester.log", max_bytes).value_or("");
}

absl::StatusOr<v1::CompleteJobRequest> JobProcess::Result() const {
  if (!exited_) return absl::FailedPreconditionError("the job is still running");
  if (overran_) return CompletionForError(job_, OverrunReason(), seconds());
  bool cancelled = (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 143) ||
                   (WIFSIGNALED(wait_status_) && WTERMSIG(wait_status_) == SIGTERM);
  if (cancelled) return absl::NotFoundError("the job was cancelled");
  if (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0) {
    std::ifstream in(options_.job_dir + "/result.pb", std::ios::binary);
    v1::CompleteJobRequest req;
    if (in && req.ParseFromIstream(&in)) return req;
  }
  std::string how = WIFSIGNALED(wait_status_) ? absl::StrCat("killed by signal ", WTERMSIG(wait_status_), " (",
                                                             strsignal(WTERMSIG(wait_status_)), ")")
                                              : absl::StrCat("exit code ", WEXITSTATUS(wait_status_));
  return CompletionForError(
      job_, absl::StrCat("the tester process died (", how, ") without a result; log tail:\n", LogTail(1500)),
      seconds());
}

}  // namespace dualswarm::workers
