// Port leases (workers/sut/port_lease.h) and the listener check
// (workers/sut/port_owner.h), in this process: leases are distinct while
// held, come from below the ephemeral range and leave no lock file behind;
// a listener held by this process belongs to this session and to no other.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "workers/sut/port_lease.h"
#include "workers/sut/port_owner.h"

namespace dualswarm::workers {
namespace {

TEST(PortLeaseTest, TheRangeLiesBelowTheEphemeralPorts) {
  EXPECT_EQ(LeaseRangeBelow({32768, 60999}).first, 16384);
  EXPECT_EQ(LeaseRangeBelow({32768, 60999}).last, 32767);
  EXPECT_EQ(LeaseRangeBelow({10000, 60999}).first, 1024);
  EXPECT_EQ(LeaseRangeBelow({10000, 60999}).last, 9999);
  EXPECT_EQ(LeaseRangeBelow({1500, 60000}).first, 60001);  // too few below: above
  EXPECT_EQ(LeaseRangeBelow({1024, 65000}).first, 1024);   // neither: everything
  EXPECT_EQ(LeaseRangeBelow({1024, 65000}).last, 65535);
}

TEST(PortLeaseTest, HeldLeasesAreDistinctAndLeaveNothingBehind) {
  std::vector<PortLease> leases;
  std::set<int> ports;
  for (int i = 0; i < 100; ++i) {
    auto lease = PortLease::Acquire();
    ASSERT_TRUE(lease.ok()) << lease.status();
    EXPECT_GE(lease->port(), 1024);
    EXPECT_TRUE(ports.insert(lease->port()).second) << "port " << lease->port() << " leased twice";
    EXPECT_EQ(::access(absl::StrCat(kPortLeaseDir, "/", lease->port()).c_str(), F_OK), 0);
    leases.push_back(*std::move(lease));
  }
  PortLease moved = std::move(leases.back());
  leases.pop_back();
  EXPECT_EQ(::access(absl::StrCat(kPortLeaseDir, "/", moved.port()).c_str(), F_OK), 0) << "a move released it";
  leases.clear();
  for (int port : ports) {
    if (port == moved.port()) continue;
    EXPECT_NE(::access(absl::StrCat(kPortLeaseDir, "/", port).c_str(), F_OK), 0) << "port " << port;
  }
}

TEST(PortOwnerTest, ListenersAreReadFromProcNetTcp) {
  const std::string tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:4E20 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1111 1 0 100 0 0 10 "
      "0\n"
      "   1: 0100007F:4E20 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 2222 1 0 20 4 30 10 "
      "-1\n"
      "   2: 00000000:4E21 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3333 1 0 100 0 0 10 "
      "0\n"
      "   3: 00000000000000000000000000000000:4E20 00000000000000000000000000000000:0000 0A 00000000:00000000 "
      "00:00000000 00000000     0        0 4444 1 0 100 0 0 10 0\n"
      "garbage\n";
  EXPECT_EQ(ListeningInodes(tcp, 20000), (std::vector<unsigned long>{1111, 4444}));  // 2222 is a connection
  EXPECT_EQ(ListeningInodes(tcp, 20001), (std::vector<unsigned long>{3333}));
  EXPECT_TRUE(ListeningInodes(tcp, 20002).empty());
}

TEST(PortOwnerTest, AListenerBelongsToItsHoldersSessionOnly) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int port = ntohs(addr.sin_port);
  EXPECT_TRUE(CheckSessionListensOn(::getsid(0), port).ok());
  absl::Status other = CheckSessionListensOn(::getsid(0) + 100000, port);
  EXPECT_TRUE(absl::IsUnavailable(other)) << other;
  EXPECT_TRUE(absl::StrContains(other.message(), absl::StrCat("pid ", ::getpid()))) << other;
  ::close(fd);
  EXPECT_TRUE(CheckSessionListensOn(::getsid(0) + 100000, port).ok()) << "nobody listens: nothing to say";
}

}  // namespace
}  // namespace dualswarm::workers
