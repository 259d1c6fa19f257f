#include "services/coordinator/store/embedded_pg.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <pqxx/pqxx>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace dualswarm::coord {
namespace {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal or not started
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv (argv[0] a path) with cwd "/", stdin /dev/null and
// stdout+stderr captured, and waits for it.
absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addchdir_np(&fa, "/");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(absl::StrCat("cannot run ", argv[0], ": ", strerror(rc)));
  }
  CommandResult res;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      res.output.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) res.exit_code = WEXITSTATUS(status);
  return res;
}

std::string Tail(const std::string& text, int max_lines) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  size_t from = lines.size() > static_cast<size_t>(max_lines) ? lines.size() - max_lines : 0;
  return absl::StrJoin(lines.begin() + static_cast<long>(from), lines.end(), "\n");
}

absl::StatusOr<int> FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::string err = strerror(errno);
    close(fd);
    return absl::InternalError(absl::StrCat("no free loopback port: ", err));
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

absl::StatusOr<std::string> RandomHex(size_t bytes) {
  std::ifstream in("/dev/urandom", std::ios::binary);
  std::string raw(bytes, '\0');
  if (!in.read(raw.data(), static_cast<std::streamsize>(bytes))) return absl::InternalError("cannot read /dev/urandom");
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& data, mode_t mode) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot write ", path, ": ", strerror(errno)));
  fchmod(fd, mode);
  bool ok = write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  close(fd);
  if (!ok) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Identifier safe to use unquoted in SQL and in a libpq conninfo string.
bool IsPlainIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool ok = (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

EmbeddedPostgres::EmbeddedPostgres(Options options) : options_(std::move(options)) {
  while (options_.root.size() > 1 && options_.root.back() == '/') options_.root.pop_back();
  cluster_dir_ = options_.root + "/pg";
  as_root_ = geteuid() == 0;
}

EmbeddedPostgres::~EmbeddedPostgres() { (void)Stop(); }

std::vector<std::string> EmbeddedPostgres::AsServerUser(std::vector<std::string> argv) const {
  if (!as_root_) return argv;
  std::vector<std::string> out = {"/usr/sbin/runuser", "-u", options_.run_as, "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string EmbeddedPostgres::ConnectionString() const { return ConnectionString(options_.database); }

std::string EmbeddedPostgres::ConnectionString(const std::string& dbname) const {
  return absl::StrCat("host=", cluster_dir_, " port=", port_, " user=", options_.superuser, " dbname=", dbname,
                      " connect_timeout=5");
}

std::string EmbeddedPostgres::LogTail(int max_lines) const {
  std::ifstream in(cluster_dir_ + "/server.log");
  std::stringstream ss;
  ss << in.rdbuf();
  return Tail(ss.str(), max_lines);
}

absl::Status EmbeddedPostgres::Start() {
  if (running_) return absl::OkStatus();
  if (options_.root.empty() || options_.root[0] != '/')
    return absl::InvalidArgumentError(
        absl::StrCat("the embedded database directory must be an absolute path, got \"", options_.root, "\""));
  if (absl::StrContains(options_.root, "'") || absl::StrContains(options_.root, " ") ||
      absl::StrContains(options_.root, "\\"))
    return absl::InvalidArgumentError(absl::StrCat("the embedded database directory \"", options_.root,
                                                   "\" must not contain spaces, quotes or backslashes"));
  // The unix socket lives in the cluster directory; sun_path holds 107 bytes.
  if (cluster_dir_.size() + std::strlen("/.s.PGSQL.65535") > 107)
    return absl::InvalidArgumentError(absl::StrCat("the embedded database directory \"", options_.root,
                                                   "\" is too long for a unix socket path (at most ~88 characters)"));
  if (!IsPlainIdentifier(options_.database) || !IsPlainIdentifier(options_.superuser))
    return absl::InvalidArgumentError("database and user names must match [a-z_][a-z0-9_]*");
  for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
    std::string path = absl::StrCat(options_.bin_dir, "/", tool);
    if (access(path.c_str(), X_OK) != 0)
      return absl::FailedPreconditionError(
          absl::StrCat(path,
                       " not found: install Debian's postgresql package (scripts/setup.sh does), or pass "
                       "--database-url to use an existing server"));
  }
  if (as_root_ && getpwnam(options_.run_as.c_str()) == nullptr)
    return absl::FailedPreconditionError(
        absl::StrCat("running as root, the embedded PostgreSQL must run as user \"", options_.run_as,
                     "\", which does not exist (Debian's postgresql package creates it)"));

  if (!Exists(options_.root)) {
    if (mkdir(options_.root.c_str(), 0711) != 0 && errno != EEXIST)
      return absl::InternalError(absl::StrCat("cannot create ", options_.root, ": ", strerror(errno)));
  }
  if (!Exists(cluster_dir_ + "/PG_VERSION")) {
    absl::Status st = InitCluster();
    if (!st.ok()) return st;
  }
  absl::Status st = StartServer();
  if (!st.ok()) return st;
  running_ = true;
  if (owned_) StartWatchdog();
  st = CreateDatabase();
  if (!st.ok()) {
    (void)Stop();
    return st;
  }
  return absl::OkStatus();
}

absl::Status EmbeddedPostgres::InitCluster() {
  if (!Exists(cluster_dir_) && mkdir(cluster_dir_.c_str(), 0700) != 0)
    return absl::InternalError(absl::StrCat("cannot create ", cluster_dir_, ": ", strerror(errno)));
  struct passwd* pw = as_root_ ? getpwnam(options_.run_as.c_str()) : nullptr;
  if (pw != nullptr && chown(cluster_dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0)
    return absl::InternalError(absl::StrCat("cannot chown ", cluster_dir_, ": ", strerror(errno)));

  auto password = RandomHex(24);
  if (!password.ok()) return password.status();
  absl::Status st = WriteFile(options_.root + "/password", *password + "\n", 0600);
  if (!st.ok()) return st;
  // initdb reads the password from a file the server's user can read.
  std::string pwfile = options_.root + "/.initdb-password";
  st = WriteFile(pwfile, *password + "\n", 0600);
  if (!st.ok()) return st;
  if (pw != nullptr && chown(pwfile.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
    unlink(pwfile.c_str());
    return absl::InternalError(absl::StrCat("cannot chown ", pwfile, ": ", strerror(errno)));
  }
  auto res = RunCommand(AsServerUser({absl::StrCat(options_.bin_dir, "/initdb"), "-D", cluster_dir_, "-U",
                                      options_.superuser, "--pwfile", pwfile, "--auth-local=trust",
                                      "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"}));
  unlink(pwfile.c_str());
  if (!res.ok()) return res.status();
  if (res->exit_code != 0) {
    std::string hint;
    if (absl::StrContains(res->output, "ermission denied"))
      hint = absl::StrCat("\n(hint: ", options_.root, " and every directory above it must be ", "searchable by user \"",
                          as_root_ ? options_.run_as : "you", "\", e.g. chmod o+x)");
    return absl::InternalError(absl::StrCat("initdb failed for ", cluster_dir_, ":\n", Tail(res->output, 20), hint));
  }
  return absl::OkStatus();
}

absl::Status EmbeddedPostgres::StartServer() {
  std::string pg_ctl = absl::StrCat(options_.bin_dir, "/pg_ctl");
  // A server already runs on this cluster (another process of ours, e.g. a
  // running coordinator while `token create` runs): use it, leave it running.
  if (Exists(cluster_dir_ + "/postmaster.pid")) {
    auto status = RunCommand(AsServerUser({pg_ctl, "-D", cluster_dir_, "status"}));
    if (status.ok() && status->exit_code == 0) {
      // postmaster.pid: pid, data dir, start time, port, socket dir, ...
      std::ifstream in(cluster_dir_ + "/postmaster.pid");
      std::string line;
      int port = 0;
      for (int i = 0; i < 4 && std::getline(in, line); ++i)
        if (i == 3) port = std::atoi(line.c_str());
      if (port <= 0)
        return absl::InternalError(
            absl::StrCat("a server runs on ", cluster_dir_, " but its port is unknown (postmaster.pid)"));
      port_ = port;
      owned_ = false;
      return absl::OkStatus();
    }
  }
  owned_ = true;
  std::string last_error;
  for (int attempt = 0; attempt < 5; ++attempt) {
    int port = options_.port;
    if (port == 0) {
      auto p = FreeLoopbackPort();
      if (!p.ok()) return p.status();
      port = *p;
    }
    std::string opts = absl::StrCat("-p ", port, " -c listen_addresses=127.0.0.1", " -c unix_socket_directories='",
                                    cluster_dir_, "'", " -c unix_socket_permissions=0700");
    if (options_.unsafe_fast) absl::StrAppend(&opts, " -c fsync=off -c synchronous_commit=off -c full_page_writes=off");
    auto res = RunCommand(AsServerUser({pg_ctl, "-D", cluster_dir_, "-l", cluster_dir_ + "/server.log", "-w", "-t",
                                        std::to_string(options_.start_timeout_s), "-o", opts, "start"}));
    if (!res.ok()) return res.status();
    if (res->exit_code == 0) {
      port_ = port;
      return absl::OkStatus();
    }
    last_error = absl::StrCat(Tail(res->output, 10), "\n", LogTail(20));
    bool port_taken =
        absl::StrContains(last_error, "could not bind") || absl::StrContains(last_error, "already in use");
    if (!port_taken || options_.port != 0) break;
  }
  return absl::InternalError(
      absl::StrCat("the embedded PostgreSQL in ", cluster_dir_, " did not start:\n", last_error));
}

absl::Status EmbeddedPostgres::CreateDatabase() {
  try {
    pqxx::connection conn(ConnectionString("postgres"));
    pqxx::nontransaction tx(conn);
    pqxx::result r = tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", options_.database);
    if (r.empty()) tx.exec("CREATE DATABASE " + tx.quote_name(options_.database));
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot create database \"", options_.database, "\" in the embedded PostgreSQL: ", e.what()));
  }
}

void EmbeddedPostgres::StartWatchdog() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  std::vector<std::string> stop =
      AsServerUser({absl::StrCat(options_.bin_dir, "/pg_ctl"), "-D", cluster_dir_, "-m", "immediate", "-w", "stop"});
  // sh reads until EOF (all write ends closed: we exited), then stops the server.
  std::vector<std::string> argv = {"/bin/sh", "-c", "read _unused; exec \"$@\"", "ds-pg-watchdog"};
  argv.insert(argv.end(), stop.begin(), stop.end());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, "/");
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own session: a signal to our process group does not reach it.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/bin/sh", &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[0]);
  if (rc != 0) {
    close(fds[1]);
    return;
  }
  watchdog_pid_ = pid;
  watchdog_fd_ = fds[1];
}

void EmbeddedPostgres::StopWatchdog() {
  if (watchdog_pid_ > 0) {
    kill(watchdog_pid_, SIGKILL);
    while (waitpid(watchdog_pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    watchdog_pid_ = -1;
  }
  if (watchdog_fd_ >= 0) {
    close(watchdog_fd_);
    watchdog_fd_ = -1;
  }
}

absl::Status EmbeddedPostgres::Stop() {
  if (!running_) return absl::OkStatus();
  if (!owned_) {  // attached to someone else's server: leave it running
    running_ = false;
    return absl::OkStatus();
  }
  StopWatchdog();
  auto res = RunCommand(AsServerUser(
      {absl::StrCat(options_.bin_dir, "/pg_ctl"), "-D", cluster_dir_, "-m", "fast", "-w", "-t", "60", "stop"}));
  running_ = false;
  if (!res.ok()) return res.status();
  if (res->exit_code != 0) return absl::InternalError(absl::StrCat("pg_ctl stop failed: ", Tail(res->output, 10)));
  return absl::OkStatus();
}

}  // namespace dualswarm::coord
