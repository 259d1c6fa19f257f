// Port leases: a loopback TCP port reserved for one SUT for as long as the
// lease lives, so that no other tester on the machine hands the same port
// to its own SUT while ours is down (killed by the nemesis, between two
// runs of a shrink). Without it, a revived SUT that lost the port could
// find another tester's server answering there, and every answer from that
// stranger would look like a wrong answer from ours.
//
// A lease is an exclusive flock on /tmp/dualswarm-ports/PORT, shared by
// every dualswarm process on the machine whatever its user, and the port
// comes from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range), where bind(port 0) and outgoing
// connections never take it.
#ifndef DUALSWARM_WORKERS_SUT_PORT_LEASE_H_
#define DUALSWARM_WORKERS_SUT_PORT_LEASE_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace dualswarm::workers {

// The directory whose lock files are the leases.
inline constexpr char kPortLeaseDir[] = "/tmp/dualswarm-ports";

// The ports leases come from: [first, last].
struct PortRange {
  int first = 0;
  int last = 0;
};
// Below the ephemeral range `ephemeral` (up to 16,384 ports, none below
// 1024); above it when below holds fewer than 1,000 ports; the whole
// unprivileged range when neither does.
PortRange LeaseRangeBelow(PortRange ephemeral);

class PortLease {
 public:
  // A port in the lease range that no other lease holds and that
  // 127.0.0.1 can bind now (no listener, no connection in TIME_WAIT).
  // Unavailable when 200 candidates were all taken.
  static absl::StatusOr<PortLease> Acquire();

  PortLease(PortLease&& other) noexcept { *this = std::move(other); }
  PortLease& operator=(PortLease&& other) noexcept;
  PortLease(const PortLease&) = delete;
  PortLease& operator=(const PortLease&) = delete;
  ~PortLease() { Release(); }

  int port() const { return port_; }

 private:
  PortLease(int port, int fd, std::string path) : port_(port), fd_(fd), path_(std::move(path)) {}
  void Release();

  int port_ = 0;
  int fd_ = -1;       // holds the flock
  std::string path_;  // the lock file, removed on release
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_PORT_LEASE_H_
