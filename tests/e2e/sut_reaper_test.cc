// SUT lifetimes across threads. The SUT reaper (workers/sut/sut_reaper.h)
// with real processes: a SUT
// that ignores SIGTERM (stopped only by the SIGKILL 2 s later) is handed
// over at once, several stop side by side, and none outlives the reaper:
// nothing listens on its port and its directory is removed when the
// destructor returns.
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "workers/sut/cluster.h"
#include "workers/sut/launcher.h"
#include "workers/sut/sut_reaper.h"

namespace dualswarm::workers {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

TEST(SutReaperTest, SlowStopsOverlapAndNoneOutlivesTheReaper) {
  LaunchOptions node;
  // The server exits on SIGTERM, the shell leading its group and a sleep
  // ignore it: the group goes only with the SIGKILL.
  node.command = absl::StrCat("trap '' TERM; ", DS_REF_KV, " --port {port} --dir {dir} & sleep 30");
  std::vector<int> ports;
  std::vector<std::string> dirs;
  double adopting = 0;
  const auto t0 = Clock::now();
  {
    SutReaper reaper(4);
    for (int i = 0; i < 3; ++i) {
      auto sut = SutCluster::Launch(node, 1);
      ASSERT_TRUE(sut.ok()) << sut.status();
      ports.push_back((*sut)->port(0));
      dirs.push_back((*sut)->dir(0));
      const auto before = Clock::now();
      reaper.Adopt(*std::move(sut));
      adopting += Since(before);
    }
  }
  const double total = Since(t0);
  EXPECT_LT(adopting, 0.5) << "Adopt waited for a stop";
  EXPECT_GE(total, 2.0) << "the SIGKILL comes 2 s after the ignored SIGTERM";
  EXPECT_LT(total, 4.5) << "three 2 s stops ran one after another";
  for (const std::string& dir : dirs) EXPECT_NE(::access(dir.c_str(), F_OK), 0) << dir << " outlived the reaper";
  for (int port : ports) EXPECT_FALSE(CanConnect("127.0.0.1", port)) << "a SUT still listens on " << port;
}

// A SUT handed from thread to thread (a warm SUT launched by one shrinking
// wave's thread and reset for the next; one stopping in the background)
// must outlive the thread that launched it. Children die with the
// process (PR_SET_PDEATHSIG), which used to mean with the spawning thread.
TEST(SutReaperTest, ASutOutlivesTheThreadThatLaunchedIt) {
  LaunchOptions o;
  o.command = absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}");
  std::unique_ptr<SutProcess> sut;
  std::thread([&] {
    auto launched = SutProcess::Launch(o);
    if (launched.ok()) sut = *std::move(launched);
  }).join();
  ASSERT_NE(sut, nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::string status;
  EXPECT_TRUE(sut->Alive(&status)) << status;
  EXPECT_TRUE(CanConnect("127.0.0.1", sut->port()));
}

}  // namespace
}  // namespace dualswarm::workers
