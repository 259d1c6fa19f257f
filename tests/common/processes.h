// Test helpers that run real binaries: run a command to completion and
// capture its output, start a long-running process with its stderr in a log
// file, and the dualswarm-coordinator as a child process (embedded
// PostgreSQL in a temporary directory or --database-url), with tokens made
// by `dualswarm-coordinator token create`. Used by the integration and
// distributed end-to-end tests; header-only so each test binary stays small.
#ifndef DUALSWARM_TESTS_COMMON_PROCESSES_H_
#define DUALSWARM_TESTS_COMMON_PROCESSES_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

extern char** environ;

namespace dualswarm::testing {

using TestClock = std::chrono::steady_clock;

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh temporary directory that user postgres can traverse (0711).
inline std::string MakeTempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) return "";
  chmod(tmpl.c_str(), 0711);
  return tmpl;
}

// Our environment with `env` set on top ("K=V" strings).
inline std::vector<std::string> EnvironmentWith(const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    if (env.count(kv.substr(0, kv.find('='))) == 0) out.push_back(kv);
  }
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

// Starts argv[0] with stdout and stderr appended to `log` (stdin from
// /dev/null), extra environment `env` on top of ours. Returns the pid or -1.
inline pid_t Spawn(const std::vector<std::string>& argv, const std::string& log,
                   const std::map<std::string, std::string>& env = {}) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage = EnvironmentWith(env);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

struct CommandResult {
  int exit_code = -1;  // -1: did not start or was killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs a command to completion (stdin from /dev/null) and captures stdout and
// stderr separately.
inline CommandResult RunCommand(const std::vector<std::string>& argv,
                                const std::map<std::string, std::string>& env = {}) {
  static int counter = 0;
  std::string base = std::filesystem::temp_directory_path() / absl::StrCat("ds-cmd-", getpid(), "-", counter++);
  std::string out_path = base + ".out", err_path = base + ".err";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage = EnvironmentWith(env);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  CommandResult r;
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  r.out = Slurp(out_path);
  r.err = Slurp(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return r;
}

// The port a binary printed after `marker` (e.g. "metrics on 127.0.0.1:",
// "http on 127.0.0.1:") in its log, or 0.
inline int PortAfter(const std::string& log, const std::string& marker) {
  size_t at = log.find(marker);
  if (at == std::string::npos) return 0;
  std::string rest = log.substr(at + marker.size());
  int port = 0;
  return absl::SimpleAtoi(rest.substr(0, rest.find_first_not_of("0123456789")), &port) ? port : 0;
}

// The number the CLI printed right after `marker` (up to the next space),
// or -1 when it printed no such line.
inline int NumberAfter(const std::string& cli_out, const std::string& marker) {
  const size_t at = cli_out.find(marker);
  if (at == std::string::npos) return -1;
  int n = -1;
  const std::string rest = cli_out.substr(at + marker.size());
  return absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &n) ? n : -1;
}

// How many requests a counterexample the CLI printed ("input: N requests
// (...)") has after shrinking, or -1 when it printed none.
inline int ShrunkRequests(const std::string& cli_out) { return NumberAfter(cli_out, "input: "); }

// How many of the verification replays reproduced, from `dualswarm test`'s
// "replayed on fresh SUTs: N of M reproduced" line; -1 without one.
inline int ReplaysReproduced(const std::string& cli_out) { return NumberAfter(cli_out, "replayed on fresh SUTs: "); }

// The pids of `parent`'s children (from /proc).
inline std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(e.path().filename().string(), &pid)) continue;
    std::string stat = Slurp(e.path().string() + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::vector<std::string> f = absl::StrSplit(stat.substr(close + 2), ' ');
    pid_t ppid = 0;
    if (f.size() > 1 && absl::SimpleAtoi(f[1], &ppid) && ppid == parent) out.push_back(pid);
  }
  return out;
}

// Whether `pid` runs (a zombie does not: nobody may reap orphans here).
inline bool Alive(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::string stat = Slurp(absl::StrCat("/proc/", pid, "/stat"));
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// The postmaster of the PostgreSQL cluster in `cluster_dir` (from its
// postmaster.pid) and every process it started; empty if none runs.
inline std::vector<pid_t> PostgresProcesses(const std::string& cluster_dir) {
  std::ifstream in(cluster_dir + "/postmaster.pid");
  pid_t postmaster = 0;
  in >> postmaster;
  if (postmaster <= 0) return {};
  std::vector<pid_t> all = ChildrenOf(postmaster);
  all.push_back(postmaster);
  return all;
}

// Waits up to `timeout` for `pred`, polling every 20 ms.
template <typename Pred>
bool WaitFor(Pred pred, std::chrono::milliseconds timeout) {
  auto deadline = TestClock::now() + timeout;
  while (TestClock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

// A dualswarm-coordinator child process. Start() runs it on a free loopback
// port with its embedded PostgreSQL in `dir`/data (or on `database_url`) and
// waits for "listening on 127.0.0.1:PORT"; the destructor kills it and waits
// for the embedded PostgreSQL to stop.
class CoordinatorProcess {
 public:
  struct Options {
    std::string binary;                   // path of dualswarm-coordinator
    std::string dir;                      // working directory for data and log (must exist)
    std::string database_url;             // empty: embedded PostgreSQL in dir/data
    std::vector<std::string> extra_args;  // e.g. {"--lease-ms", "1000"}
    int port = 0;                         // 0: any free port (a restart reuses the last one)
  };

  explicit CoordinatorProcess(Options o) : o_(std::move(o)) {}
  ~CoordinatorProcess() { Kill(); }

  // Returns "" on success, else what went wrong (with the log).
  std::string Start() {
    log_ = o_.dir + "/coordinator.log";
    size_t log_start = std::filesystem::exists(log_) ? std::filesystem::file_size(log_) : 0;
    std::vector<std::string> argv = {o_.binary, "--listen", absl::StrCat("127.0.0.1:", port_ ? port_ : o_.port)};
    if (o_.database_url.empty()) {
      argv.insert(argv.end(), {"--data-dir", data_dir()});
    } else {
      argv.insert(argv.end(), {"--database-url", o_.database_url});
    }
    argv.insert(argv.end(), o_.extra_args.begin(), o_.extra_args.end());
    pid_ = Spawn(argv, log_);
    if (pid_ < 0) return "cannot spawn " + o_.binary;
    auto deadline = TestClock::now() + std::chrono::seconds(90);
    const std::string marker = "listening on 127.0.0.1:";
    while (TestClock::now() < deadline) {
      std::string log = Slurp(log_).substr(std::min(log_start, Slurp(log_).size()));
      size_t at = log.find(marker);
      // The line is complete once its newline is there: std::cerr writes
      // each << piece on its own, so the port may not have arrived yet.
      if (at != std::string::npos && log.find('\n', at) != std::string::npos) {
        std::string rest = log.substr(at + marker.size());
        int port = 0;
        if (!absl::SimpleAtoi(rest.substr(0, rest.find_first_not_of("0123456789")), &port) || port <= 0)
          return "cannot parse the port from:\n" + log;
        port_ = port;
        channel_ = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
        return "";
      }
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return "the coordinator exited:\n" + log;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "the coordinator did not start within 90 s:\n" + Slurp(log_);
  }

  // SIGTERM and wait (clean shutdown: the embedded PostgreSQL stops too).
  // Returns the exit code, or -1.
  int Stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // SIGKILL; waits for the embedded PostgreSQL's watchdog to stop it.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    if (o_.database_url.empty()) {
      std::string pidfile = data_dir() + "/pg/postmaster.pid";
      WaitFor([&] { return access(pidfile.c_str(), F_OK) != 0; }, std::chrono::seconds(20));
    }
  }

  // A new token for `role`, made with `token create` next to the server.
  std::string Token(const std::string& role) {
    std::vector<std::string> argv = {o_.binary, "token", "create", "--role", role, "--name", role + "-test"};
    if (o_.database_url.empty()) {
      argv.insert(argv.end(), {"--data-dir", data_dir()});
    } else {
      argv.insert(argv.end(), {"--database-url", o_.database_url});
    }
    CommandResult r = RunCommand(argv);
    if (r.exit_code != 0) return "";
    return std::string(absl::StripAsciiWhitespace(r.out));
  }

  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string data_dir() const { return o_.dir + "/data"; }
  std::string log() const { return Slurp(log_); }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

 private:
  Options o_;
  pid_t pid_ = -1;
  int port_ = 0;
  std::string log_;
  std::shared_ptr<grpc::Channel> channel_;
};

// A ClientContext with a bearer token (none when empty) and a deadline.
inline std::unique_ptr<grpc::ClientContext> AuthContext(const std::string& token,
                                                        std::chrono::seconds deadline = std::chrono::seconds(30)) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
  ctx->set_deadline(std::chrono::system_clock::now() + deadline);
  return ctx;
}

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_COMMON_PROCESSES_H_
