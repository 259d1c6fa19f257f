// SocketWatchdog (a blocked read on a socket whose deadline passed wakes up
// with end-of-file) and the limits the store adds to a connection string.
#include "services/coordinator/store/socket_watchdog.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {
namespace {

using Clock = SocketWatchdog::Clock;
using std::chrono::milliseconds;

TEST(SocketWatchdog, ShutsDownASocketWhoseDeadlinePassed) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SocketWatchdog watchdog;
  auto t0 = Clock::now();
  uint64_t ticket = watchdog.Arm(fds[0], t0 + milliseconds(100));
  char c;
  ssize_t n = recv(fds[0], &c, 1, 0);  // nobody writes: only the watchdog ends this
  double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(n, 0);
  EXPECT_GE(took, 0.09);
  EXPECT_LT(took, 5.0);
  EXPECT_TRUE(watchdog.Disarm(ticket));
  EXPECT_EQ(watchdog.fired(), 1u);
  close(fds[0]);
  close(fds[1]);
}

TEST(SocketWatchdog, LeavesASocketAloneThatWasDisarmedInTime) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SocketWatchdog watchdog;
  uint64_t late = watchdog.Arm(fds[0], Clock::now() + std::chrono::seconds(30));
  uint64_t soon = watchdog.Arm(fds[1], Clock::now() + milliseconds(50));  // an earlier deadline wakes it
  EXPECT_FALSE(watchdog.Disarm(late));
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_TRUE(watchdog.Disarm(soon));
  // fds[0] still works both ways; fds[1] was shut down.
  EXPECT_EQ(watchdog.fired(), 1u);
  EXPECT_EQ(send(fds[0], "x", 1, MSG_NOSIGNAL), -1);  // its peer is shut down
  char c;
  EXPECT_EQ(recv(fds[0], &c, 1, MSG_DONTWAIT), 0);  // end-of-file from the shut-down peer
  EXPECT_FALSE(watchdog.Disarm(12345));             // unknown tickets are harmless
  close(fds[0]);
  close(fds[1]);
}

TEST(ConnectionUrlWithLimits, AddsWhatTheUrlDoesNotSet) {
  EXPECT_EQ(ConnectionUrlWithLimits("host=/tmp/x port=5432", 5, 30000),
            "host=/tmp/x port=5432 connect_timeout=5 options='-c statement_timeout=30000'");
  EXPECT_EQ(ConnectionUrlWithLimits("", 3, 0), "connect_timeout=3");
  EXPECT_EQ(ConnectionUrlWithLimits("postgresql://u@h/db", 5, 1500),
            "postgresql://u@h/db?connect_timeout=5&options=-c%20statement_timeout%3D1500");
  EXPECT_EQ(ConnectionUrlWithLimits("postgres://h/db?sslmode=require", 0, 100),
            "postgres://h/db?sslmode=require&options=-c%20statement_timeout%3D100");
  // The caller's own settings stand.
  EXPECT_EQ(ConnectionUrlWithLimits("host=h connect_timeout=9 options='-c work_mem=4MB'", 5, 100),
            "host=h connect_timeout=9 options='-c work_mem=4MB'");
}

}  // namespace
}  // namespace dualswarm::coord
