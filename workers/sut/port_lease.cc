#include "workers/sut/port_lease.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"

namespace dualswarm::workers {
namespace {

constexpr int kLowestPort = 1024;
constexpr int kMostPortsBelow = 16384;
constexpr int kFewestPorts = 1000;
constexpr int kCandidates = 200;

// net.ipv4.ip_local_port_range; Linux's default when it cannot be read.
PortRange EphemeralRange() {
  PortRange r{32768, 60999};
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "re")) {
    int first = 0, last = 0;
    if (std::fscanf(f, "%d %d", &first, &last) == 2 && first > 0 && first <= last && last <= 65535) r = {first, last};
    std::fclose(f);
  }
  return r;
}

// Whether 127.0.0.1:port can be bound now without SO_REUSEADDR: nothing
// listens there and no connection of it lingers in TIME_WAIT.
bool CanBind(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// The lock directory, writable by every user and sticky (like /tmp): made
// when missing; refused when it is no directory (a link, a file), cannot
// be written, or lets others remove our leases (not sticky, and owned by
// another user than root or us).
absl::Status MakeLeaseDir() {
  if (::mkdir(kPortLeaseDir, 01777) == 0) ::chmod(kPortLeaseDir, 01777);  // past the umask
  struct stat st {};
  if (::lstat(kPortLeaseDir, &st) != 0)
    return absl::FailedPreconditionError(absl::StrCat("port leases: ", kPortLeaseDir, ": ", std::strerror(errno)));
  if (!S_ISDIR(st.st_mode))
    return absl::FailedPreconditionError(
        absl::StrCat("port leases: ", kPortLeaseDir, " is not a directory (a link or a file): remove it"));
  if ((st.st_mode & S_ISVTX) == 0 && st.st_uid != 0 && st.st_uid != ::geteuid())
    return absl::FailedPreconditionError(absl::StrCat("port leases: ", kPortLeaseDir, " belongs to user ", st.st_uid,
                                                      " and is not sticky: others could remove the leases"));
  if (::access(kPortLeaseDir, W_OK | X_OK) != 0)
    return absl::FailedPreconditionError(
        absl::StrCat("port leases: cannot write in ", kPortLeaseDir, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

// An exclusive, non-blocking flock on `path`'s current file; -1 when
// another lease holds it or the file was replaced under us (a holder
// removed it on release between our open and our lock).
int LockFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  ::fchmod(fd, 0666);  // past the umask; fails harmlessly on another user's file
  struct stat held {
  }, named{};
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0 || ::fstat(fd, &held) != 0 || ::stat(path.c_str(), &named) != 0 ||
      held.st_ino != named.st_ino || held.st_dev != named.st_dev) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

PortRange LeaseRangeBelow(PortRange ephemeral) {
  if (ephemeral.first - kLowestPort >= kFewestPorts)
    return {std::max(kLowestPort, ephemeral.first - kMostPortsBelow), ephemeral.first - 1};
  if (65535 - ephemeral.last >= kFewestPorts) return {ephemeral.last + 1, 65535};
  return {kLowestPort, 65535};
}

absl::StatusOr<PortLease> PortLease::Acquire() {
  const PortRange range = LeaseRangeBelow(EphemeralRange());
  const int size = range.last - range.first + 1;
  if (absl::Status dir = MakeLeaseDir(); !dir.ok()) return dir;
  std::random_device random;
  const int start = static_cast<int>(random() % static_cast<unsigned>(size));
  for (int i = 0; i < std::min(kCandidates, size); ++i) {
    const int port = range.first + (start + i) % size;
    std::string path = absl::StrCat(kPortLeaseDir, "/", port);
    int fd = LockFile(path);
    if (fd < 0) continue;
    PortLease lease(port, fd, std::move(path));
    if (CanBind(port)) return lease;
  }
  return absl::UnavailableError(absl::StrCat("no free loopback port to lease: ", std::min(kCandidates, size),
                                             " ports of ", range.first, "-", range.last, " were leased (",
                                             kPortLeaseDir, ") or bound"));
}

PortLease& PortLease::operator=(PortLease&& other) noexcept {
  if (this != &other) {
    Release();
    port_ = std::exchange(other.port_, 0);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

void PortLease::Release() {
  if (fd_ < 0) return;
  // Removed while still locked, so whoever opened it meanwhile sees it
  // replaced (LockFile) instead of sharing a lock with a newcomer. Another
  // user's file in the sticky directory stays; it is reused as it is.
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

}  // namespace dualswarm::workers
