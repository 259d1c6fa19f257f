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
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "engine/lang/spec.h"
#include "tests/common/processes.h"
#include "tests/common/shipped_spec.h"
#include "workers/runner/runner.h"
#include "workers/sut/cluster.h"
#include "workers/sut/launcher.h"
#include "workers/sut/spare_suts.h"
#include "workers/sut/sut_reaper.h"

namespace dualswarm::workers {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Waits (at most 10 s) until `spares` has one up.
bool AwaitReady(const SpareSuts& spares) {
  const auto t0 = Clock::now();
  while (spares.ready() == 0 && Since(t0) < 10) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return spares.ready() > 0;
}

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
      ASSERT_TRUE(AwaitReady(spares));
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
  const std::string die = absl::StrCat(dir, "/die");
  // The first launch's server runs until the file `die` appears; later
  // launches live.
  SpareLaunch launch;
  launch.node.command = absl::StrCat(
      "if [ -e ", marker, " ]; then exec ", DS_REF_KV, " --port {port} --dir {dir}; fi; touch ", marker, "; ",
      DS_REF_KV, " --port {port} --dir {dir} & while [ ! -e ", die, " ]; do sleep 0.05; done; kill $!; wait");
  {
    SutReaper reaper;
    SpareSuts spares(launch, 1, 1, &reaper);
    ASSERT_TRUE(AwaitReady(spares));
    { std::ofstream(die) << "x"; }
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));  // the first spare is gone
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
    SpareLaunch launch = KvLaunch("sleep 30; exec ");
    launch.node.ready_timeout_ms = 60000;
    SpareSuts spares(launch, 2, 4, &reaper);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_LT(Since(t0), 5.0) << "the destructor waited for a 30 s start";
}

TEST(SpareSutsTest, LaunchesAreTheSameOnlyWhenEveryArgumentIs) {
  SpareLaunch a = KvLaunch("");
  SpareLaunch b = a;
  EXPECT_TRUE(a == b);
  b.nodes = 3;
  EXPECT_FALSE(a == b);
  b = a;
  b.relay_links = true;
  EXPECT_FALSE(a == b);
  b = a;
  b.node.placeholders.emplace_back("{origin_port}", "4000");
  EXPECT_FALSE(a == b);
  b = a;
  b.node.ready_probe = "http:/";
  EXPECT_FALSE(a == b);
  b = a;
  b.node.command += " --mutant 1";
  EXPECT_FALSE(a == b);
  b = a;
  b.node.work_root = "/var/tmp";
  EXPECT_FALSE(a == b);
  b = a;
  b.node.ready_timeout_ms = 1;
  EXPECT_FALSE(a == b);
}

// A job takes a spare launched as it would launch its own SUT, and only
// then; jobs that cannot (an fs program, origins) get no pool at all.
TEST(SpareSutsTest, AJobTakesASpareOnlyWhenItWouldLaunchTheSame) {
  std::shared_ptr<const lang::Spec> spec = Shipped("kv.dspec");
  ASSERT_NE(spec, nullptr);
  JobOptions o;
  o.launch = absl::StrCat(DS_REF_KV, " --port {port} --dir {dir}");
  o.adapter = "jsonl";
  o.exec.steps = 20;
  std::optional<SpareLaunch> launch = SpareLaunchFor(o);
  ASSERT_TRUE(launch.has_value());
  SutReaper reaper;
  SpareSuts spares(*launch, 1, 1, &reaper);
  o.spare_suts = &spares;
  o.sut_reaper = &reaper;
  auto r = RunJob(spec, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->outcome, Outcome::kPassed);
  EXPECT_EQ(spares.taken(), 1);
  // Another launch (a mutant) launches its own.
  JobOptions other = o;
  other.launch += " --mutant 1";
  r = RunJob(spec, other);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(spares.taken(), 1);

  JobOptions fs = o;
  fs.adapter = "fs";
  EXPECT_FALSE(SpareLaunchFor(fs).has_value());
  JobOptions with_origins = o;
  with_origins.origins = 1;
  EXPECT_FALSE(SpareLaunchFor(with_origins).has_value());
  JobOptions cluster = o;
  cluster.nodes = 3;
  EXPECT_FALSE(SpareLaunchFor(cluster).has_value());
  JobOptions faults = o;
  faults.nemesis.faults = {"kill"};
  EXPECT_FALSE(SpareLaunchFor(faults).has_value());
  JobOptions target;
  target.target = "127.0.0.1:1";
  EXPECT_FALSE(SpareLaunchFor(target).has_value());
}

}  // namespace
}  // namespace dualswarm::workers
