// Spare SUTs (workers/sut/spare_suts.h) with real processes: spares are
// launched ahead of need and no more than the pool's depth, each handed
// out is alive and fresh, one that died while it waited is never handed
// out, a launch that fails stops the pool instead of hanging its takers,
// and the destructor cancels a slow launch instead of waiting for it.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/common/processes.h"
#include "workers/sut/cluster.h"
#include "workers/sut/launcher.h"
#include "workers/sut/spare_suts.h"
#include "workers/sut/sut_reaper.h"

namespace dualswarm::workers {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int LinesIn(const std::string& path) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Waits (at most 10 s) until `path` has `n` lines; the lines it has.
int AwaitLines(const std::string& path, int n) {
  const auto t0 = Clock::now();
  while (LinesIn(path) < n && Since(t0) < 10) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return LinesIn(path);
}

SpareLaunch KvLaunch(const std::string& prefix) {
  SpareLaunch launch;
  launch.node.command = absl::StrCat(prefix, DS_REF_KV, " --port {port} --dir {dir}");
  return launch;
}

TEST(SpareSutsTest, SparesAreLaunchedAheadAliveFreshAndNoMoreThanTheDepth) {
  const std::string dir = testing::MakeTempDir("ds-spares");
  ASSERT_FALSE(dir.empty());
  const std::string launches = absl::StrCat(dir, "/launches");
  std::vector<int> unused_ports;
  std::set<std::string> dirs;
  {
    SutReaper reaper;
    SpareSuts spares(KvLaunch(absl::StrCat("echo x >> ", launches, "; exec ")), 2, 2, &reaper);
    EXPECT_EQ(AwaitLines(launches, 2), 2) << "the pool launches its depth before anyone asks";
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(LinesIn(launches), 2) << "more launches than the depth while nobody took one";
    for (int taken = 1; taken <= 3; ++taken) {
      std::unique_ptr<SutCluster> sut = spares.Take();
      ASSERT_NE(sut, nullptr);
      EXPECT_TRUE(sut->Alive());
      EXPECT_TRUE(CanConnect("127.0.0.1", sut->port(0)));
      EXPECT_TRUE(dirs.insert(sut->dir(0)).second) << "a spare handed out twice";
      EXPECT_EQ(AwaitLines(launches, taken + 2), taken + 2) << "a taken spare was not replaced";
      reaper.Adopt(std::move(sut));
    }
    EXPECT_EQ(spares.taken(), 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(LinesIn(launches), 5);
  }
  std::filesystem::remove_all(dir);
}

TEST(SpareSutsTest, TheDepthGrowsOnlyWhileTakersWait) {
  SutReaper reaper;
  {
    // Takers that come after the spare is up never wait: one is enough.
    SpareSuts spares(KvLaunch(""), 1, 3, &reaper);
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      std::unique_ptr<SutCluster> sut = spares.Take();
      ASSERT_NE(sut, nullptr);
      reaper.Adopt(std::move(sut));
    }
    EXPECT_EQ(spares.depth(), 1);
  }
  {
    // Takers that come faster than a 0.5 s start: the depth grows to its most.
    SpareSuts spares(KvLaunch("sleep 0.5; exec "), 1, 3, &reaper);
    for (int i = 0; i < 4; ++i) {
      std::unique_ptr<SutCluster> sut = spares.Take();
      ASSERT_NE(sut, nullptr);
      EXPECT_TRUE(CanConnect("127.0.0.1", sut->port(0)));
      reaper.Adopt(std::move(sut));
    }
    EXPECT_EQ(spares.depth(), 3);
  }
}

TEST(SpareSutsTest, ASpareThatDiedWhileItWaitedIsNotHandedOut) {
  const std::string dir = testing::MakeTempDir("ds-spares-died");
  ASSERT_FALSE(dir.empty());
  const std::string marker = absl::StrCat(dir, "/first");
  // The first launch's server is ready, then exits after 300 ms; later
  // launches live.
  SpareLaunch launch;
  launch.node.command =
      absl::StrCat("if [ -e ", marker, " ]; then exec ", DS_REF_KV, " --port {port} --dir {dir}; fi; touch ", marker,
                   "; ", DS_REF_KV, " --port {port} --dir {dir} & sleep 0.3; kill $!; wait");
  {
    SutReaper reaper;
    SpareSuts spares(launch, 1, 1, &reaper);
    const auto t0 = Clock::now();
    while (::access(marker.c_str(), F_OK) != 0 && Since(t0) < 10)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // the first spare is gone
    std::unique_ptr<SutCluster> sut = spares.Take();
    ASSERT_NE(sut, nullptr);
    EXPECT_TRUE(sut->Alive());
    EXPECT_TRUE(CanConnect("127.0.0.1", sut->port(0)));
    reaper.Adopt(std::move(sut));
  }
  std::filesystem::remove_all(dir);
}

TEST(SpareSutsTest, AFailedLaunchStopsThePoolAndTakersLaunchTheirOwn) {
  SutReaper reaper;
  SpareLaunch launch;
  launch.node.command = "sh -c 'exit 3'";
  SpareSuts spares(launch, 2, 2, &reaper);
  EXPECT_EQ(spares.Take(), nullptr);
  EXPECT_EQ(spares.Take(), nullptr);
  EXPECT_EQ(spares.taken(), 0);
}

TEST(SpareSutsTest, TheDestructorCancelsASlowLaunch) {
  SutReaper reaper;
  const auto t0 = Clock::now();
  {
    SpareSuts spares(KvLaunch("sleep 30; exec "), 2, 4, &reaper);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_LT(Since(t0), 10.0) << "the destructor waited for a 30 s start";
}

TEST(SpareSutsTest, LaunchesAreTheSameOnlyWhenEveryArgumentIs) {
  SpareLaunch a = KvLaunch("");
  SpareLaunch b = a;
  EXPECT_TRUE(SameLaunch(a, b));
  b.nodes = 3;
  EXPECT_FALSE(SameLaunch(a, b));
  b = a;
  b.relay_links = true;
  EXPECT_FALSE(SameLaunch(a, b));
  b = a;
  b.node.placeholders.emplace_back("{origin_port}", "4000");
  EXPECT_FALSE(SameLaunch(a, b));
  b = a;
  b.node.ready_probe = "http:/";
  EXPECT_FALSE(SameLaunch(a, b));
}

}  // namespace
}  // namespace dualswarm::workers
