// The worker daemon's job process handle (workers/daemon/job_process.h):
// a job child that never finishes (a spec handler computing for ever looks
// the same from outside) is killed once it runs past its time budget +
// grace, with every process it started — its own helpers and the SUT
// groups it reported — and the job is reported as an ERROR naming the
// budget, not as a finding. The child here is a shell script standing in
// for `dualswarm-worker run-job`: it starts a "SUT" in a session of its
// own, reports its group on the progress pipe like the real child, starts a
// helper in its own group, ignores SIGTERM, and loops for ever.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "workers/daemon/job_process.h"

namespace dualswarm::workers {
namespace {

using Clock = std::chrono::steady_clock;

// True while `pid` exists and is not a zombie (an orphan may stay a zombie
// in a container whose init does not reap).
bool Running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

pid_t ReadPid(const std::string& path) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream in(path);
    long pid = 0;
    if (in >> pid && pid > 1) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

class JobProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ds-job-process-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    script_ = dir_ + "/fake-run-job";
    std::ofstream out(script_);
    // setsid: the SUT's own session, as the launcher does; its pgid is its pid.
    out << "#!/bin/sh\n"
           "trap '' TERM\n"
           "setsid sleep 1000 &\n"
           "echo $! > "
        << dir_
        << "/sut.pid\n"
           "printf '{\"sut\":%d,\"up\":true}\\n' $! >&3\n"
           "sleep 1000 &\n"
           "echo $! > "
        << dir_
        << "/helper.pid\n"
           "while :; do sleep 1; done\n";
    out.close();
    ::chmod(script_.c_str(), 0755);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string dir_, script_;
};

TEST_F(JobProcessTest, LimitIsReadinessPlusBudgetPlusGraceAndGrowsWhileShrinking) {
  v1::LeasedJob job;
  JobProcessOptions o;
  o.grace_seconds = 10;
  o.shrink_max_seconds = 60;
  o.max_job_seconds = 0;
  EXPECT_EQ(OverrunLimitSeconds(job, o, false), 0) << "no time budget, no cap: no limit";
  o.max_job_seconds = 3600;
  EXPECT_EQ(OverrunLimitSeconds(job, o, true), 3600) << "no time budget: the worker's cap, shrinking included";
  job.mutable_budget()->set_time_budget_ms(3000);
  job.mutable_target()->set_address("127.0.0.1:1");
  EXPECT_DOUBLE_EQ(OverrunLimitSeconds(job, o, false), 13);
  job.mutable_target()->clear_address();
  job.mutable_target()->set_launch("ds-ref-kv --port {port}");
  EXPECT_DOUBLE_EQ(OverrunLimitSeconds(job, o, false), 23) << "default readiness timeout 10 s";
  job.mutable_target()->mutable_readiness()->set_timeout_ms(2000);
  EXPECT_DOUBLE_EQ(OverrunLimitSeconds(job, o, false), 15);
  EXPECT_DOUBLE_EQ(OverrunLimitSeconds(job, o, true), 15 + 60 + 5);
}

TEST_F(JobProcessTest, ChildPastItsBudgetIsKilledWithItsGroupAndSuts) {
  v1::LeasedJob job;
  job.set_job_id(7);
  job.set_lease_token("t");
  job.mutable_budget()->set_time_budget_ms(1000);
  job.mutable_target()->set_address("127.0.0.1:1");
  JobProcessOptions o;
  o.self_exe = script_;
  o.job_dir = dir_ + "/job";
  o.grace_seconds = 1;
  auto started = Clock::now();
  auto proc = JobProcess::Start(job, o);
  ASSERT_TRUE(proc.ok()) << proc.status();
  pid_t sut = ReadPid(dir_ + "/sut.pid");
  pid_t helper = ReadPid(dir_ + "/helper.pid");
  ASSERT_GT(sut, 1);
  ASSERT_GT(helper, 1);
  EXPECT_TRUE(Running(sut));
  while ((*proc)->Poll()) {
    ASSERT_LT(Clock::now() - started, std::chrono::seconds(10)) << "the child was never killed";
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  double took = std::chrono::duration<double>(Clock::now() - started).count();
  EXPECT_GE(took, 2.0) << "killed before budget + grace";
  EXPECT_LT(took, 3.0) << "budget 1 s + grace 1 s, polled every 25 ms";
  EXPECT_TRUE((*proc)->overran());
  // Every process of the job is gone: the SUT (own session, reported) and
  // the helper (the child's process group).
  for (int i = 0; i < 100 && (Running(sut) || Running(helper)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(Running(sut)) << "the SUT outlived its killed job";
  EXPECT_FALSE(Running(helper)) << "a process in the child's group outlived it";

  auto result = (*proc)->Result();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome(), v1::JOB_OUTCOME_ERROR);
  EXPECT_EQ(result->job_id(), 7);
  EXPECT_NE(result->reason().find("timed out"), std::string::npos) << result->reason();
  EXPECT_NE(result->reason().find("time budget of 1000 ms"), std::string::npos) << result->reason();
  EXPECT_NE(result->reason().find("Not a finding"), std::string::npos) << result->reason();
  EXPECT_FALSE(result->has_counterexample());
}

TEST_F(JobProcessTest, ChildWithoutBudgetOrCapIsNotKilled) {
  v1::LeasedJob job;
  job.mutable_target()->set_address("127.0.0.1:1");
  JobProcessOptions o;
  o.self_exe = script_;
  o.job_dir = dir_ + "/job";
  o.grace_seconds = 0;
  o.max_job_seconds = 0;
  auto proc = JobProcess::Start(job, o);
  ASSERT_TRUE(proc.ok()) << proc.status();
  pid_t sut = ReadPid(dir_ + "/sut.pid");
  auto until = Clock::now() + std::chrono::milliseconds(1500);
  while (Clock::now() < until) {
    ASSERT_TRUE((*proc)->Poll());
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_FALSE((*proc)->overran());
  (*proc)->Kill();
  for (int i = 0; i < 100 && Running(sut); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(Running(sut));
}

TEST_F(JobProcessTest, ChildWithoutBudgetIsKilledAtTheWorkersCap) {
  v1::LeasedJob job;
  job.mutable_target()->set_address("127.0.0.1:1");
  JobProcessOptions o;
  o.self_exe = script_;
  o.job_dir = dir_ + "/job";
  o.max_job_seconds = 1;
  auto proc = JobProcess::Start(job, o);
  ASSERT_TRUE(proc.ok()) << proc.status();
  pid_t sut = ReadPid(dir_ + "/sut.pid");
  auto started = Clock::now();
  while ((*proc)->Poll()) {
    ASSERT_LT(Clock::now() - started, std::chrono::seconds(10)) << "the child was never killed";
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_TRUE((*proc)->overran());
  for (int i = 0; i < 100 && Running(sut); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(Running(sut));
  auto result = (*proc)->Result();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->outcome(), v1::JOB_OUTCOME_ERROR);
  EXPECT_NE(result->reason().find("no time budget"), std::string::npos) << result->reason();
  EXPECT_NE(result->reason().find("--max-job-seconds"), std::string::npos) << result->reason();
}

}  // namespace
}  // namespace dualswarm::workers
