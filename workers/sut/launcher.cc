#include "workers/sut/launcher.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "util/file_tail.h"
#include "util/status_macros.h"
#include "workers/sut/port_owner.h"
#include "workers/sut/shell_spawn.h"

namespace dualswarm::workers {

namespace {
std::atomic<SutObserver> g_sut_observer{nullptr};
void NotifySut(pid_t pgid, bool started) {
  if (SutObserver o = g_sut_observer.load(); o != nullptr) o(pgid, started);
}
// Milliseconds until `deadline` (at least 1).
int MsUntil(std::chrono::steady_clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
  return static_cast<int>(std::max<int64_t>(1, ms));
}

// Reads from `fd` into *line until a newline, 1024 bytes, EOF or an error;
// false if `deadline` came first.
bool ReadLine(int fd, std::chrono::steady_clock::time_point deadline, std::string* line) {
  char buf[256];
  while (line->find('\n') == std::string::npos && line->size() < 1024) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, MsUntil(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return false;
    if (ready < 0) return true;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return true;
    line->append(buf, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

void SetSutObserver(SutObserver observer) { g_sut_observer.store(observer); }

bool AnswersHttp(int port, const std::string& path, int timeout_ms, std::string* answer) {
  answer->clear();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *answer = "no TCP connection";
    ::close(fd);
    return false;
  }
  std::string req = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: 127.0.0.1:", port,
                                 "\r\nUser-Agent: dualswarm-readiness\r\nConnection: close\r\n\r\n");
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    *answer = "the request could not be sent";
    ::close(fd);
    return false;
  }
  // The status line only, bounded in size ("HTTP/1.1 200 OK") and in time
  // as a whole: SO_RCVTIMEO bounds each recv, so a server trickling a byte
  // at a time would hold the probe for up to 1024 of them.
  std::string line;
  bool late = !ReadLine(fd, deadline, &line);
  ::close(fd);
  line = line.substr(0, line.find_first_of("\r\n"));
  *answer = line.empty() ? "no answer" : absl::StrCat("\"", line.substr(0, 100), "\"");
  if (late) absl::StrAppend(answer, " (no complete status line within ", timeout_ms, " ms)");
  int status = 0;
  if (!absl::StartsWith(line, "HTTP/1.") || line.size() < 12 || line[8] != ' ' ||
      !absl::SimpleAtoi(line.substr(9, 3), &status))
    return false;
  return status >= 200 && status < 500;
}

bool CanConnect(const std::string& host, int port, int timeout_ms) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return false;
  }
  // Non-blocking, with a bound: a listener whose backlog is full (it never
  // accepts) leaves a blocking connect retrying SYNs for about two minutes.
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  if (!ok && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    ok = ::poll(&p, 1, timeout_ms) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  ::close(fd);
  return ok;
}

absl::StatusOr<std::unique_ptr<SutProcess>> SutProcess::Launch(const LaunchOptions& o) {
  ASSIGN_OR_RETURN(std::unique_ptr<SutProcess> p, Start(o));
  RETURN_IF_ERROR(p->WaitReady(o));
  return p;
}

absl::StatusOr<std::unique_ptr<SutProcess>> SutProcess::Start(const LaunchOptions& o) {
  if (o.command.empty()) return absl::InvalidArgumentError("empty launch command");
  RETURN_IF_ERROR(util::ParseReadyProbe(o.ready_probe).status());
  std::optional<PortLease> lease;
  if (o.port == 0) {
    ASSIGN_OR_RETURN(lease, PortLease::Acquire());
  }
  const int port = lease.has_value() ? lease->port() : o.port;
  std::string tmpl = absl::StrCat(o.work_root, "/dualswarm-sut-XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr)
    return absl::InternalError(absl::StrCat("mkdtemp in ", o.work_root, ": ", std::strerror(errno)));
  std::unique_ptr<SutProcess> p(new SutProcess());
  p->dir_ = buf.data();
  p->lease_ = std::move(lease);
  p->port_ = port;
  p->command_ = p->Expand(o.command, o);
  RETURN_IF_ERROR(p->Spawn(/*append_log=*/false));
  return p;
}

std::string SutProcess::Expand(const std::string& command_template, const LaunchOptions& o) const {
  std::vector<std::pair<std::string, std::string>> replace = o.placeholders;
  replace.emplace_back("{port}", absl::StrCat(port_));
  replace.emplace_back("{dir}", dir_);
  return absl::StrReplaceAll(command_template, replace);
}

absl::Status SutProcess::RunAside(const std::string& command_template, const LaunchOptions& o, int timeout_ms) {
  const std::string command = Expand(command_template, o);
  const std::string log = dir_ + "/aside.log";
  ASSIGN_OR_RETURN(ShellRun run, RunShell({command, log, /*append_log=*/false, ""}, timeout_ms));
  if (run.timed_out)
    return absl::DeadlineExceededError(absl::StrCat("`", command, "` did not end within ", timeout_ms, " ms"));
  if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0)
    return absl::FailedPreconditionError(absl::StrCat("`", command, "` failed (",
                                                      WIFEXITED(run.status)
                                                          ? absl::StrCat("exit code ", WEXITSTATUS(run.status))
                                                          : absl::StrCat("signal ", WTERMSIG(run.status)),
                                                      "): ", util::ReadFileTail(log, 500).value_or("")));
  return absl::OkStatus();
}

absl::Status SutProcess::Spawn(bool append_log) {
  std::string cmd = command_;
  // A simple command replaces the shell, so the SUT is the process we wait
  // for and reap; compound commands keep the shell as the group leader.
  if (cmd.find_first_of(";&|\n`$()<>") == std::string::npos) cmd = "exec " + cmd;
  ASSIGN_OR_RETURN(pid_t pid, SpawnShell({cmd, dir_ + "/sut.log", append_log, ""}));
  pid_ = pid;
  reaped_ = false;
  paused_ = false;
  NotifySut(pid, true);
  return absl::OkStatus();
}

void SutProcess::Kill() {
  if (pid_ < 0) return;
  ::kill(-pid_, SIGKILL);  // the whole group, even when its leader exited
  if (!reaped_) ::waitpid(pid_, &wait_status_, 0);
  reaped_ = true;
  paused_ = false;
  NotifySut(pid_, false);
}

absl::Status SutProcess::Revive(const LaunchOptions& o) {
  Kill();
  RETURN_IF_ERROR(Spawn(/*append_log=*/true));
  return WaitReady(o);
}

void SutProcess::Pause() {
  if (pid_ >= 0 && !paused_ && ::kill(-pid_, SIGSTOP) == 0) paused_ = true;
}

void SutProcess::Resume() {
  if (pid_ >= 0 && paused_) ::kill(-pid_, SIGCONT);
  paused_ = false;
}

absl::Status SutProcess::WaitReady(const LaunchOptions& o, const std::atomic<bool>* cancel) {
  ASSIGN_OR_RETURN(util::ReadyProbe probe, util::ParseReadyProbe(o.ready_probe));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.ready_timeout_ms);
  std::string last;       // the HTTP probe's last answer
  absl::Status stranger;  // the last probe reached another program's listener
  while (true) {
    if (cancel != nullptr && cancel->load()) return absl::CancelledError("launch cancelled while the SUT started");
    std::string status;
    if (!Alive(&status)) {
      // A SUT that could not bind its port because another program holds
      // it exits at once: that is the machine's fault, not the SUT's.
      RETURN_IF_ERROR(CheckSessionListensOn(pid_, port_));
      return absl::FailedPreconditionError(
          absl::StrCat("the SUT command exited before it ",
                       probe.http ? absl::StrCat("answered GET ", probe.path) : std::string("accepted connections"),
                       " (", status, "): ", command_, "\n--- sut.log ---\n", LogTail()));
    }
    if (!probe.http ? CanConnect("127.0.0.1", port_, std::min(1000, MsUntil(deadline)))
                    : AnswersHttp(port_, probe.path, std::min(1000, MsUntil(deadline)), &last)) {
      // Not ready while the listener is another's: a previous life's
      // workers may still be exiting, or the SUT has yet to bind.
      stranger = CheckSessionListensOn(pid_, port_);
      if (stranger.ok()) return absl::OkStatus();
    }
    if (std::chrono::steady_clock::now() > deadline) {
      if (!stranger.ok()) return stranger;
      return absl::DeadlineExceededError(
          absl::StrCat(!probe.http ? absl::StrCat("the SUT did not accept connections on 127.0.0.1:", port_)
                                   : absl::StrCat("the SUT on 127.0.0.1:", port_, " did not answer GET ", probe.path,
                                                  " with a 2xx/3xx/4xx status (last: ", last, ")"),
                       " within ", o.ready_timeout_ms, " ms: ", command_, "\n--- sut.log ---\n", LogTail()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool SutProcess::Alive(std::string* status) {
  if (pid_ < 0) return false;
  if (!reaped_) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == 0) return true;
    reaped_ = true;
    wait_status_ = st;
  }
  if (status) {
    if (WIFEXITED(wait_status_)) {
      *status = absl::StrCat("exit code ", WEXITSTATUS(wait_status_));
    } else if (WIFSIGNALED(wait_status_)) {
      *status = absl::StrCat("killed by signal ", WTERMSIG(wait_status_));
    } else {
      *status = "exited";
    }
  }
  return false;
}

void SutProcess::Stop() {
  if (pid_ < 0) return;
  Resume();  // a stopped process cannot act on SIGTERM
  ::kill(-pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (Alive() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // The group may outlive the leader: kill whatever is left.
  ::kill(-pid_, SIGKILL);
  if (!reaped_) {
    ::waitpid(pid_, &wait_status_, 0);
    reaped_ = true;
  }
  NotifySut(pid_, false);
}

std::string SutProcess::LogTail(size_t max_bytes) const {
  return util::ReadFileTail(dir_ + "/sut.log", max_bytes).value_or("");
}

SutProcess::~SutProcess() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace dualswarm::workers
