#include "workers/sut/port_owner.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace dualswarm::workers {

// istream::read catches what the file buffer throws (a read that fails with
// ESRCH: the process exited after the open) and sets badbit instead.
std::string ReadProcFile(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  char chunk[4096];
  while (in && text.size() < max_bytes) {
    in.read(chunk, sizeof chunk);
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (text.size() > max_bytes) text.resize(max_bytes);
  return text;
}

namespace {

constexpr char kListen[] = "0A";  // TCP_LISTEN in /proc/net/tcp's st column
constexpr size_t kMostProcNetBytes = 16 << 20;
constexpr int kMostHoldersNamed = 3;

std::set<unsigned long> InodesListeningOn(int port) {
  std::set<unsigned long> inodes;
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    for (unsigned long inode : ListeningInodes(ReadProcFile(file, kMostProcNetBytes), port)) inodes.insert(inode);
  }
  return inodes;
}

// The session of process `pid` (field 6 of /proc/PID/stat); -1 when gone.
pid_t SessionOf(pid_t pid) {
  const std::string stat = ReadProcFile(absl::StrCat("/proc/", pid, "/stat"), 4096);
  const size_t comm_end = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (comm_end == std::string::npos) return -1;
  std::istringstream fields(stat.substr(comm_end + 1));
  std::string state;
  long ppid = 0, pgrp = 0, session = -1;
  fields >> state >> ppid >> pgrp >> session;
  return fields ? static_cast<pid_t>(session) : -1;
}

// Whether process `pid` holds one of `inodes`; nullopt when its fds cannot
// be read (another user's process, or one that is not dumpable: a server
// that dropped its privileges).
std::optional<bool> HoldsOneOf(pid_t pid, const std::set<unsigned long>& inodes) {
  const std::string fd_dir = absl::StrCat("/proc/", pid, "/fd");
  DIR* dir = ::opendir(fd_dir.c_str());
  if (dir == nullptr) return std::nullopt;
  bool holds = false;
  while (dirent* e = ::readdir(dir)) {
    char target[64];
    ssize_t n = ::readlink(absl::StrCat(fd_dir, "/", e->d_name).c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    unsigned long inode = 0;
    if (std::sscanf(target, "socket:[%lu]", &inode) == 1 && inodes.count(inode) > 0) {
      holds = true;
      break;
    }
  }
  ::closedir(dir);
  return holds;
}

// Every process this user can see.
std::vector<pid_t> Processes() {
  std::vector<pid_t> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* e = ::readdir(proc)) {
    int pid = 0;
    if (absl::SimpleAtoi(e->d_name, &pid) && pid > 0) pids.push_back(pid);
  }
  ::closedir(proc);
  return pids;
}

std::string Describe(pid_t pid) {
  std::string comm = ReadProcFile(absl::StrCat("/proc/", pid, "/comm"), 64);
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  return absl::StrCat(comm, " (pid ", pid, ")");
}

}  // namespace

std::vector<unsigned long> ListeningInodes(const std::string& proc_net_tcp, int port) {
  std::vector<unsigned long> inodes;
  for (absl::string_view line : absl::StrSplit(proc_net_tcp, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    if (f.size() < 10 || f[3] != kListen) continue;
    const size_t colon = f[1].rfind(':');
    int local_port = 0;
    unsigned long inode = 0;
    if (colon == absl::string_view::npos || !absl::SimpleHexAtoi(f[1].substr(colon + 1), &local_port) ||
        local_port != port || !absl::SimpleAtoi(f[9], &inode) || inode == 0)
      continue;
    inodes.push_back(inode);
  }
  return inodes;
}

absl::Status CheckSessionListensOn(pid_t session, int port) {
  const std::set<unsigned long> inodes = InodesListeningOn(port);
  if (inodes.empty()) return absl::OkStatus();
  const std::vector<pid_t> pids = Processes();
  for (pid_t pid : pids) {
    if (SessionOf(pid) != session) continue;
    // A member whose fds this user cannot read may be the holder: nothing
    // can be said.
    if (std::optional<bool> holds = HoldsOneOf(pid, inodes); !holds.has_value() || *holds) return absl::OkStatus();
  }
  std::vector<std::string> holders;
  for (pid_t pid : pids)
    if (static_cast<int>(holders.size()) < kMostHoldersNamed && HoldsOneOf(pid, inodes).value_or(false))
      holders.push_back(Describe(pid));
  if (holders.empty()) return absl::OkStatus();  // the holder is not ours to see: nothing can be said
  return absl::UnavailableError(absl::StrCat(
      "port ", port, " accepts connections, but no process of the SUT (session ", session, ") listens there; ",
      absl::StrJoin(holders, ", "),
      " does. Another program took the port while the SUT was starting or down, or the SUT left its session "
      "(daemonized): run it in the foreground"));
}

}  // namespace dualswarm::workers
