// Distributed end-to-end tests: the real dualswarm-coordinator (embedded
// PostgreSQL in a temporary directory) and real dualswarm-worker daemons
// over loopback gRPC, testing the reference WebDAV server and its mutants.
// Covers: a correct server passes and a mutant fails with one finding group
// whose counterexample replays; a worker killed with SIGKILL mid-job (its
// job is re-leased and finished by another worker, counted once); a
// coordinator restart mid-run; targets that exit at once, never become
// ready, or flood garbage; a grpc target (etcd) with its descriptor set; a
// cluster target (three nodes, every connection to one); an intermediary
// target (the reference proxy, its origin played by the job); a job stuck in a
// spec handler, killed past its time budget; a SIGTERM that drains; worker
// metrics; a target's reset command used by the worker's shrinking
// (Apache).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/finding.grpc.pb.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "engine/harness/counterexample.h"
#include "engine/lang/spec.h"
#include "gtest/gtest.h"
#include "tests/common/http_get.h"
#include "tests/common/processes.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"
#include "workers/sut/launcher.h"

namespace {

namespace v1 = ::dualswarm::v1;
using dualswarm::testing::AuthContext;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::Slurp;
using dualswarm::testing::WaitFor;
using std::chrono::milliseconds;
using std::chrono::seconds;

const std::string kWebdav = DS_REF_WEBDAV;

struct Worker {
  pid_t pid = -1;
  std::string log;
  std::string work_dir;
};

class SwarmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-swarm");
    ASSERT_FALSE(tmp_.empty());
    StartCoordinator({"--lease-ms", "3000"});
  }

  void TearDown() override {
    for (auto& w : workers_) KillWorker(w);
    coordinator_.reset();
    if (!HasFailure()) {
      std::error_code ec;
      std::filesystem::remove_all(tmp_, ec);
    } else {
      std::fprintf(stderr, "test files kept in %s\n", tmp_.c_str());
    }
  }

  void StartCoordinator(std::vector<std::string> extra) {
    coordinator_ =
        std::make_unique<CoordinatorProcess>(CoordinatorProcess::Options{DUALSWARM_COORDINATOR, tmp_, "", extra, 0});
    std::string err = coordinator_->Start();
    ASSERT_EQ(err, "");
    Connect();
    submitter_ = coordinator_->Token("submitter");
    admin_ = coordinator_->Token("admin");
    worker_token_ = coordinator_->Token("worker");
    ASSERT_FALSE(submitter_.empty() || admin_.empty() || worker_token_.empty());
  }

  void Connect() {
    auto ch = coordinator_->channel();
    specs_ = v1::SpecService::NewStub(ch);
    targets_ = v1::TargetService::NewStub(ch);
    runs_ = v1::RunService::NewStub(ch);
    findings_ = v1::FindingService::NewStub(ch);
  }

  Worker& StartWorker(const std::string& name, int slots, std::vector<std::string> extra = {}) {
    Worker w;
    w.log = absl::StrCat(tmp_, "/", name, ".log");
    w.work_dir = absl::StrCat(tmp_, "/", name);
    std::vector<std::string> argv = {
        DUALSWARM_WORKER, "--coordinator", coordinator_->address(), "--slots", absl::StrCat(slots), "--name", name,
        "--work-dir",     w.work_dir,      "--lease-wait-ms",       "500",     "--shrink-time",     "20"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    w.pid = dualswarm::testing::Spawn(argv, w.log, {{"DUALSWARM_TOKEN", worker_token_}});
    EXPECT_GT(w.pid, 0);
    EXPECT_TRUE(WaitFor([&] { return absl::StrContains(Slurp(w.log), "registered with"); }, seconds(20)))
        << Slurp(w.log);
    workers_.push_back(w);
    return workers_.back();
  }

  static void KillWorker(Worker& w) {
    if (w.pid <= 0) return;
    kill(w.pid, SIGKILL);
    waitpid(w.pid, nullptr, 0);
    w.pid = -1;
  }

  // SIGTERM; returns the exit code (-1 if it did not exit within `limit`).
  static int StopWorker(Worker& w, seconds limit = seconds(60)) {
    if (w.pid <= 0) return -1;
    kill(w.pid, SIGTERM);
    int status = 0;
    bool exited = WaitFor([&] { return waitpid(w.pid, &status, WNOHANG) == w.pid; }, limit);
    if (!exited) return -1;
    w.pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  std::string PushSpec(const std::string& file) {
    v1::CreateSpecRequest req;
    req.set_file_name(std::filesystem::path(file).filename().string());
    req.set_source(Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/" + file));
    v1::CreateSpecResponse resp;
    grpc::Status s = specs_->Create(AuthContext(submitter_).get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.spec().hash();
  }

  int64_t AddTarget(const std::string& name, const std::string& launch, int ready_timeout_ms = 10000,
                    const std::string& adapter = "http", const std::string& descriptor_set = "") {
    v1::Target t;
    t.set_name(name);
    t.set_adapter(adapter);
    t.set_launch(launch);
    t.set_descriptor_set(descriptor_set);
    t.mutable_readiness()->set_timeout_ms(ready_timeout_ms);
    return CreateTarget(t);
  }

  int64_t CreateTarget(const v1::Target& target) {
    v1::CreateTargetRequest req;
    *req.mutable_target() = target;
    v1::Target t;
    grpc::Status s = targets_->Create(AuthContext(admin_).get(), req, &t);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return t.id();
  }

  static std::string Webdav(int mutant) {
    return absl::StrCat(kWebdav, " --port {port} --dir {dir} --mutant ", mutant);
  }

  // `connections` 0: the coordinator's default; otherwise that many, one
  // request in flight on each.
  v1::Run Submit(const std::string& spec, int64_t target, int jobs, uint64_t steps, int64_t time_budget_ms = 0,
                 uint64_t seed = 7, int connections = 0) {
    v1::SubmitRunRequest req;
    auto* t = req.mutable_template_();
    t->set_spec_hash(spec);
    t->set_target_id(target);
    t->set_jobs(jobs);
    t->set_seed(seed);
    t->mutable_budget()->set_steps(steps);
    t->mutable_budget()->set_time_budget_ms(time_budget_ms);
    t->mutable_budget()->set_response_timeout_ms(2000);
    t->mutable_budget()->set_connections(connections);
    t->mutable_budget()->set_max_in_flight(connections);
    v1::Run run;
    grpc::Status s = runs_->Submit(AuthContext(submitter_).get(), req, &run);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return run;
  }

  v1::Run GetRun(int64_t id) {
    v1::GetRunRequest req;
    req.set_id(id);
    v1::Run run;
    grpc::Status s = runs_->Get(AuthContext(submitter_).get(), req, &run);
    if (!s.ok()) run.set_state(v1::RUN_STATE_UNSPECIFIED);
    return run;
  }

  static bool Final(const v1::Run& r) {
    return r.state() == v1::RUN_STATE_PASSED || r.state() == v1::RUN_STATE_FAILED ||
           r.state() == v1::RUN_STATE_CANCELLED || r.state() == v1::RUN_STATE_ERROR;
  }

  v1::Run WaitRun(int64_t id, seconds limit) {
    v1::Run run;
    WaitFor(
        [&] {
          run = GetRun(id);
          return Final(run);
        },
        limit);
    return run;
  }

  // Defined below, next to the tests that use it.
  void ExpectRealPassesAndMutantIsShrunk(const std::string& spec_file, const std::string& adapter,
                                         const std::string& real, const std::string& mutant);

  std::string WorkerLogs() {
    std::string out;
    for (const auto& w : workers_) absl::StrAppend(&out, "--- ", w.log, "\n", Slurp(w.log));
    return out;
  }

  std::vector<v1::Finding> FindingsOfRun(int64_t run_id) {
    v1::ListFindingsRequest req;
    req.set_run_id(run_id);
    v1::ListFindingsResponse resp;
    grpc::Status s = findings_->List(AuthContext(submitter_).get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return {resp.findings().begin(), resp.findings().end()};
  }

  v1::Finding GetFinding(int64_t id) {
    v1::GetFindingRequest req;
    req.set_id(id);
    req.set_max_counterexamples(100);
    v1::Finding f;
    grpc::Status s = findings_->Get(AuthContext(submitter_).get(), req, &f);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return f;
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::string submitter_, admin_, worker_token_;
  std::unique_ptr<v1::SpecService::Stub> specs_;
  std::unique_ptr<v1::TargetService::Stub> targets_;
  std::unique_ptr<v1::RunService::Stub> runs_;
  std::unique_ptr<v1::FindingService::Stub> findings_;
  std::vector<Worker> workers_;
};

TEST_F(SwarmTest, CorrectServerPassesAndAMutantFailsWithOneReplayableFindingGroup) {
  // The product's default shrinking budget: four jobs shrinking at once on
  // two cores take several times as long as one alone, and a counterexample
  // left half-shrunk may name its bug by another explanation.
  StartWorker("w1", 2, {"--shrink-time", "60"});
  StartWorker("w2", 2, {"--shrink-time", "60"});
  std::string spec = PushSpec("specs/http_webdav.dspec");
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  int64_t bad = AddTarget("webdav-mutant-6", Webdav(6));

  v1::Run pass = Submit(spec, good, 4, 500);
  v1::Run fail = Submit(spec, bad, 8, 2000);
  pass = WaitRun(pass.id(), seconds(120));
  fail = WaitRun(fail.id(), seconds(180));
  ASSERT_EQ(pass.state(), v1::RUN_STATE_PASSED) << pass.DebugString() << WorkerLogs();
  EXPECT_EQ(pass.counts().passed(), 4);
  EXPECT_TRUE(FindingsOfRun(pass.id()).empty());

  ASSERT_EQ(fail.state(), v1::RUN_STATE_FAILED) << fail.DebugString() << WorkerLogs();
  EXPECT_GE(fail.counts().failed(), 1);
  EXPECT_EQ(fail.counts().error(), 0) << WorkerLogs();
  std::vector<v1::Finding> groups = FindingsOfRun(fail.id());
  ASSERT_EQ(groups.size(), 1u) << WorkerLogs();
  v1::Finding f = GetFinding(groups[0].id());
  EXPECT_EQ(f.kind(), v1::VERDICT_KIND_SAFETY);
  EXPECT_EQ(f.count(), fail.counts().failed());  // every failing job in the one group
  ASSERT_GE(f.counterexamples_size(), 1);
  const v1::Counterexample& smallest = f.counterexamples(0);
  EXPECT_EQ(smallest.id(), f.smallest_counterexample_id());
  for (const auto& c : f.counterexamples()) EXPECT_LE(smallest.size(), c.size());
  EXPECT_LT(smallest.size(), smallest.unshrunk_size());
  EXPECT_LE(smallest.size(), 8);

  // The smallest counterexample replays on fresh servers, here, from the
  // coordinator's copy alone.
  auto cx = dualswarm::harness::CounterexampleFromJson(smallest.document_json());
  ASSERT_TRUE(cx.ok()) << cx.status();
  EXPECT_EQ(cx->signature, f.signature());
  auto loaded = dualswarm::lang::LoadSpec("http_webdav.dspec",
                                          Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/http_webdav.dspec"));
  ASSERT_TRUE(loaded.ok());
  int reproduced = 0;
  for (int i = 0; i < 5; ++i) {
    dualswarm::workers::JobOptions o = dualswarm::workers::ReplayOptions(*cx, cx->input);
    o.launch = Webdav(6);
    auto r = dualswarm::workers::RunJob(*loaded, o);
    ASSERT_TRUE(r.ok()) << r.status();
    if (r->outcome != dualswarm::workers::Outcome::kPassed &&
        dualswarm::harness::ComputeSignature(dualswarm::workers::VerdictOf(*r), r->trace) == f.signature())
      ++reproduced;
  }
  EXPECT_GE(reproduced, 4);
}

// A worker's idle slots shrink its one finding: with three slots and one
// job, the job's shrinking borrows the two no job holds (slot_tokens.h),
// reruns three candidates at once, and says so in the worker's log.
TEST_F(SwarmTest, AShrinkingJobBorrowsTheWorkersIdleSlots) {
  StartWorker("w1", 3, {"--shrink-jobs", "1"});
  std::string spec = PushSpec("specs/http_webdav.dspec");
  int64_t bad = AddTarget("webdav-mutant-6", Webdav(6));
  v1::Run fail = WaitRun(Submit(spec, bad, 1, 2000).id(), seconds(120));
  ASSERT_EQ(fail.state(), v1::RUN_STATE_FAILED) << fail.DebugString() << WorkerLogs();
  const std::string logs = WorkerLogs();
  // "N candidates at once (K free slots borrowed)": K is 2 unless the
  // daemon's probe of its free slots held one at the very moment.
  const size_t at = logs.find(" free slots borrowed)");
  ASSERT_NE(at, std::string::npos) << logs;
  const size_t open = logs.rfind('(', at);
  ASSERT_NE(open, std::string::npos) << logs;
  int borrowed = 0, jobs = 0;
  ASSERT_TRUE(absl::SimpleAtoi(logs.substr(open + 1, at - open - 1), &borrowed)) << logs;
  const size_t jobs_at = logs.rfind(", ", open);
  ASSERT_TRUE(absl::SimpleAtoi(logs.substr(jobs_at + 2, logs.find(' ', jobs_at + 2) - jobs_at - 2), &jobs)) << logs;
  EXPECT_GE(borrowed, 1) << logs;
  EXPECT_LE(borrowed, 2) << logs;
  EXPECT_EQ(jobs, 1 + borrowed) << logs;
}

// A target that is a program acting on directory trees (the fs adapter)
// runs in a swarm like a server: the correct reference synchronizer
// passes, a mutant's jobs fail into one finding group whose smallest
// counterexample is a few replica operations and runs (shrunk two
// candidates at a time: --shrink-jobs reaches the job's shrinking).
TEST_F(SwarmTest, AFileSynchronizerTargetRunsInASwarm) {
  StartWorker("w1", 2, {"--shrink-jobs", "2"});
  std::string spec = PushSpec("specs/filesync.dspec");
  auto sync = [](int mutant) { return absl::StrCat(DS_REF_SYNC, " {a} {b} {dir}/archive --mutant ", mutant); };
  int64_t good = AddTarget("sync-correct", sync(0), 10000, "fs");
  int64_t bad = AddTarget("sync-mutant-3", sync(3), 10000, "fs");
  v1::Run pass = WaitRun(Submit(spec, good, 2, 200).id(), seconds(120));
  v1::Run fail = WaitRun(Submit(spec, bad, 2, 200).id(), seconds(120));
  ASSERT_EQ(pass.state(), v1::RUN_STATE_PASSED) << pass.DebugString() << WorkerLogs();
  EXPECT_EQ(pass.counts().passed(), 2);
  ASSERT_EQ(fail.state(), v1::RUN_STATE_FAILED) << fail.DebugString() << WorkerLogs();
  EXPECT_EQ(fail.counts().error(), 0) << WorkerLogs();
  std::vector<v1::Finding> groups = FindingsOfRun(fail.id());
  ASSERT_EQ(groups.size(), 1u) << WorkerLogs();
  v1::Finding f = GetFinding(groups[0].id());
  ASSERT_GE(f.counterexamples_size(), 1);
  EXPECT_LE(f.counterexamples(0).size(), 8);
  EXPECT_TRUE(absl::StrContains(f.counterexamples(0).document_json(), "\"op\":\"run\""));
}

// An fs target's run_as reaches the worker's jobs: the program runs as
// nobody (the launch command checks, and exits 3 otherwise, which the spec
// rejects), in replicas nobody owns. The worker's work directory must let
// nobody through (a private one fails the job, saying so).
TEST_F(SwarmTest, AnFsTargetsProgramRunsAsItsUser) {
  ASSERT_EQ(::geteuid(), 0) << "running the program as nobody needs the tests to run as root (README)";
  ASSERT_EQ(::chmod(tmp_.c_str(), 0711), 0);
  StartWorker("w1", 2);
  std::string spec = PushSpec("specs/filesync.dspec");
  v1::Target t;
  t.set_name("sync-as-nobody");
  t.set_adapter("fs");
  t.set_launch(absl::StrCat("test \"$(id -un)\" = nobody || exit 3; ", DS_REF_SYNC, " {a} {b} {dir}/archive"));
  t.set_run_as("nobody");
  v1::Run run = WaitRun(Submit(spec, CreateTarget(t), 2, 100).id(), seconds(120));
  ASSERT_EQ(run.state(), v1::RUN_STATE_PASSED) << run.DebugString() << WorkerLogs();
  EXPECT_EQ(run.counts().passed(), 2);
  // Behind a private directory the job is an error that says so.
  ASSERT_EQ(::chmod(tmp_.c_str(), 0700), 0);
  v1::Run walled = WaitRun(Submit(spec, run.template_().target_id(), 1, 100).id(), seconds(60));
  EXPECT_EQ(walled.state(), v1::RUN_STATE_ERROR) << walled.DebugString() << WorkerLogs();
  EXPECT_TRUE(FindingsOfRun(walled.id()).empty());
  EXPECT_TRUE(absl::StrContains(WorkerLogs(), "cannot reach the job's directory")) << WorkerLogs();
}

TEST_F(SwarmTest, AWorkerKilledMidJobLosesNothingAndCountsNothingTwice) {
  std::string spec = PushSpec("specs/http_webdav.dspec");
  // Mutant 8 leaves every 7th request unanswered: found after the 2 s
  // response timeout, then shrinking takes several more seconds — a wide
  // window to kill the worker while it holds the lease.
  int64_t bad = AddTarget("webdav-mutant-8", Webdav(8));
  Worker& a = StartWorker("a", 1);
  v1::Run run = Submit(spec, bad, 1, 2000);
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(Slurp(a.log), "started"); }, seconds(30))) << Slurp(a.log);
  std::this_thread::sleep_for(milliseconds(1500));
  KillWorker(a);
  // Its tester and SUT die with it (parent-death signals): nothing keeps
  // serving from its work directory.
  EXPECT_TRUE(WaitFor(
      [&] {
        dualswarm::testing::CommandResult r = dualswarm::testing::RunCommand({"/usr/bin/pgrep", "-f", a.work_dir});
        return r.exit_code == 1;  // no process mentions the work dir
      },
      seconds(10)));
  StartWorker("b", 1);
  run = WaitRun(run.id(), seconds(120));
  ASSERT_EQ(run.state(), v1::RUN_STATE_FAILED) << run.DebugString() << WorkerLogs();
  EXPECT_EQ(run.counts().failed(), 1);
  std::vector<v1::Finding> groups = FindingsOfRun(run.id());
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(GetFinding(groups[0].id()).count(), 1);  // the killed attempt reported nothing
  EXPECT_TRUE(absl::StrContains(Slurp(workers_.back().log), "attempt 2")) << WorkerLogs();
}

TEST_F(SwarmTest, ARunSurvivesACoordinatorRestart) {
  std::string spec = PushSpec("specs/http_webdav.dspec");
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  StartWorker("w1", 2);
  v1::Run run = Submit(spec, good, 6, 1000000, /*time_budget_ms=*/1500);
  ASSERT_TRUE(WaitFor([&] { return GetRun(run.id()).counts().passed() >= 1; }, seconds(60))) << WorkerLogs();
  ASSERT_EQ(coordinator_->Stop(), 0) << coordinator_->log();
  std::this_thread::sleep_for(seconds(2));
  ASSERT_EQ(coordinator_->Start(), "");
  Connect();
  run = WaitRun(run.id(), seconds(120));
  EXPECT_EQ(run.state(), v1::RUN_STATE_PASSED) << run.DebugString() << WorkerLogs();
  EXPECT_EQ(run.counts().passed(), 6);
  EXPECT_TRUE(absl::StrContains(Slurp(workers_[0].log), "the coordinator is back") ||
              absl::StrContains(Slurp(workers_[0].log), "report failed"))
      << WorkerLogs();
}

TEST_F(SwarmTest, BrokenTargetsEndInClearErrorsAndTheWorkerKeepsServing) {
  std::string spec = PushSpec("specs/http_webdav.dspec");
  Worker& w = StartWorker("w1", 2);
  int64_t exits = AddTarget("exits-at-once", "/bin/false --port {port}");
  int64_t never_ready = AddTarget("never-ready", "sleep 60 # never listens on {port}", /*ready_timeout_ms=*/1000);
  int64_t garbage = AddTarget("garbage", absl::StrCat(DS_GARBAGE_SERVER, " --port {port}"));
  v1::Run r1 = WaitRun(Submit(spec, exits, 1, 100).id(), seconds(60));
  v1::Run r2 = WaitRun(Submit(spec, never_ready, 1, 100).id(), seconds(60));
  v1::Run r3 = WaitRun(Submit(spec, garbage, 1, 100).id(), seconds(90));
  EXPECT_EQ(r1.state(), v1::RUN_STATE_ERROR) << r1.DebugString();
  EXPECT_EQ(r1.counts().error(), 1);
  EXPECT_EQ(r2.state(), v1::RUN_STATE_ERROR) << r2.DebugString();
  // A flood of non-HTTP bytes is a response no spec execution explains.
  EXPECT_EQ(r3.state(), v1::RUN_STATE_FAILED) << r3.DebugString() << WorkerLogs();
  std::string log = Slurp(w.log);
  EXPECT_TRUE(absl::StrContains(log, "exited before it accepted connections")) << log;
  EXPECT_TRUE(absl::StrContains(log, "did not accept connections")) << log;
  // Still serving: a good run after the broken ones passes.
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  v1::Run ok = WaitRun(Submit(spec, good, 2, 300).id(), seconds(60));
  EXPECT_EQ(ok.state(), v1::RUN_STATE_PASSED) << ok.DebugString() << WorkerLogs();
  EXPECT_GT(w.pid, 0);
  EXPECT_EQ(waitpid(w.pid, nullptr, WNOHANG), 0);  // alive
}

// A target's reset command reaches the worker's shrinking: its reruns
// reuse running Apache servers, emptied by the command, instead of
// launching one per candidate, and the finding (Apache compares
// If-None-Match strongly on PUT, docs/real-servers.md) is shrunk as on
// fresh servers.
TEST_F(SwarmTest, ATargetsResetCommandLetsShrinkingReuseRunningServers) {
  ASSERT_EQ(::access("/usr/sbin/apache2", X_OK), 0) << "apache2 is installed by scripts/setup.sh";
  StartWorker("w1", 1, {"--shrink-time", "20"});
  std::string spec = PushSpec("specs/http_webdav.dspec");
  const std::string log = tmp_ + "/resets";
  v1::Target t;
  t.set_name("apache");
  t.set_adapter("http");
  t.set_launch(absl::StrCat("sh ", DUALSWARM_SOURCE_DIR, "/tests/real/apache_webdav.sh {port} {dir}"));
  t.set_reset_command(absl::StrCat("find {dir}/root -mindepth 1 -delete && echo reset >> ", log));
  t.mutable_readiness()->set_timeout_ms(10000);
  const int64_t apache = CreateTarget(t);

  // One connection, one request at a time: the finding is sequential.
  v1::Run run = WaitRun(Submit(spec, apache, 1, 2000, 0, /*seed=*/1, /*connections=*/1).id(), seconds(50));
  ASSERT_EQ(run.state(), v1::RUN_STATE_FAILED) << run.DebugString() << WorkerLogs();
  std::vector<v1::Finding> groups = FindingsOfRun(run.id());
  ASSERT_EQ(groups.size(), 1u) << WorkerLogs();
  v1::Finding f = GetFinding(groups[0].id());
  ASSERT_GE(f.counterexamples_size(), 1);
  const v1::Counterexample& cx = f.counterexamples(0);
  EXPECT_LE(cx.size(), 4) << cx.document_json();
  EXPECT_LT(cx.size(), cx.unshrunk_size());
  EXPECT_TRUE(absl::StrContains(cx.document_json(), "if-none-match")) << cx.document_json();
  const std::string resets = Slurp(log);
  EXPECT_GE(std::count(resets.begin(), resets.end(), '\n'), 10) << "the reruns did not reuse servers\n" << WorkerLogs();
}

// Targets with the resp and memcached adapters run in the service like HTTP
// ones: the real server passes its spec, and a reference server's mutant
// (tests/suts/MUTANTS.md) is a finding, shrunk.
void SwarmTest::ExpectRealPassesAndMutantIsShrunk(const std::string& spec_file, const std::string& adapter,
                                                  const std::string& real, const std::string& mutant) {
  StartWorker("w1", 2);
  std::string spec = PushSpec(spec_file);
  int64_t real_target = AddTarget(adapter + "-real", real, 10000, adapter);
  int64_t mutant_target = AddTarget(adapter + "-mutant", mutant, 10000, adapter);
  v1::Run pass = WaitRun(Submit(spec, real_target, 4, 2000).id(), seconds(90));
  v1::Run fail = WaitRun(Submit(spec, mutant_target, 2, 2000).id(), seconds(120));
  ASSERT_EQ(pass.state(), v1::RUN_STATE_PASSED) << pass.DebugString() << WorkerLogs();
  EXPECT_EQ(pass.counts().passed(), 4);
  ASSERT_EQ(fail.state(), v1::RUN_STATE_FAILED) << fail.DebugString() << WorkerLogs();
  std::vector<v1::Finding> groups = FindingsOfRun(fail.id());
  ASSERT_GE(groups.size(), 1u) << WorkerLogs();
  v1::Finding f = GetFinding(groups[0].id());
  EXPECT_EQ(f.kind(), v1::VERDICT_KIND_SAFETY);
  ASSERT_GE(f.counterexamples_size(), 1);
  EXPECT_LT(f.counterexamples(0).size(), f.counterexamples(0).unshrunk_size());
}

// redis-server, and ds-ref-resp 1 (lost INCR).
TEST_F(SwarmTest, RespTargetsRunInTheService) {
  ASSERT_EQ(::access("/usr/bin/redis-server", X_OK), 0) << "redis-server is installed by scripts/setup.sh";
  ExpectRealPassesAndMutantIsShrunk("specs/redis.dspec", "resp",
                                    "/usr/bin/redis-server --save '' --appendonly no --port {port} --bind 127.0.0.1",
                                    absl::StrCat(DS_REF_RESP, " --port {port} --dir {dir} --mutant 1"));
}

// memcached, and ds-ref-memcached 1 (cas unique reused).
TEST_F(SwarmTest, MemcachedTargetsRunInTheService) {
  ASSERT_EQ(::access("/usr/bin/memcached", X_OK), 0) << "memcached is installed by scripts/setup.sh";
  ExpectRealPassesAndMutantIsShrunk("specs/memcached.dspec", "memcached",
                                    "/usr/bin/memcached -l 127.0.0.1 -p {port} -U 0 -u root -m 64",
                                    absl::StrCat(DS_REF_MEMCACHED, " --port {port} --dir {dir} --mutant 1"));
}

// Debian's etcd through the grpc adapter: the target carries the
// descriptor set of specs/etcd_kv.proto from the coordinator to the job's
// child process. (tests/e2e/etcd_test.cc runs the same server directly.)
TEST_F(SwarmTest, GrpcTargetsRunInTheServiceWithTheirDescriptorSet) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  const std::string etcd =
      "/usr/bin/etcd --name ds --data-dir {dir}/data --listen-client-urls http://127.0.0.1:{port} "
      "--advertise-client-urls http://127.0.0.1:{port} --listen-peer-urls http://127.0.0.1:{peer_port} "
      "--initial-advertise-peer-urls http://127.0.0.1:{peer_port} --initial-cluster ds=http://127.0.0.1:{peer_port} "
      "--log-level error --logger zap";
  std::string descriptor_set = Slurp(DS_ETCD_DESCRIPTOR_SET);
  ASSERT_FALSE(descriptor_set.empty()) << DS_ETCD_DESCRIPTOR_SET;
  StartWorker("w1", 2);
  std::string spec = PushSpec("specs/etcd_kv.dspec");
  int64_t target = AddTarget("etcd", etcd, 10000, "grpc", descriptor_set);
  v1::Run run = WaitRun(Submit(spec, target, 2, 500).id(), seconds(45));
  EXPECT_EQ(run.state(), v1::RUN_STATE_PASSED) << run.DebugString() << WorkerLogs();
  EXPECT_EQ(run.counts().passed(), 2) << WorkerLogs();
}

// A cluster target: three ds-ref-webdav servers that share nothing, every
// connection to node 2. It passes only if the worker got both fields: with
// one node there is no node 2 (the job is an error), and round-robin over
// servers that share nothing is a finding (tests/e2e/cluster_test.cc).
// (Not specs/redis.dspec: it reads nodes other than 0 as replicas.)
TEST_F(SwarmTest, ClusterTargetsRunInTheServiceWithTheirNodes) {
  StartWorker("w1", 2);
  std::string spec = PushSpec("specs/http_webdav.dspec");
  v1::Target t;
  t.set_name("webdav3");
  t.set_adapter("http");
  t.set_launch(Webdav(0));
  t.set_nodes(3);
  t.set_connect_node(2);
  int64_t target = CreateTarget(t);
  v1::Run run = WaitRun(Submit(spec, target, 2, 1000).id(), seconds(45));
  EXPECT_EQ(run.state(), v1::RUN_STATE_PASSED) << run.DebugString() << WorkerLogs();
  EXPECT_EQ(run.counts().passed(), 2) << WorkerLogs();
}

// An intermediary target: the reference forward proxy, the workers' jobs
// playing its clients and its origin (origins 1, {origin_port} in the
// launch). The correct proxy passes; mutant 3 (the client's Host forwarded)
// is a finding, shrunk.
TEST_F(SwarmTest, ProxyTargetsRunInTheServiceWithTheirOrigins) {
  StartWorker("w1", 2);
  std::string spec = PushSpec("specs/http_proxy.dspec");
  auto proxy = [&](const std::string& name, int mutant) {
    v1::Target t;
    t.set_name(name);
    t.set_adapter("http");
    t.set_launch(absl::StrCat(DS_REF_PROXY, " --port {port} --origin-port {origin_port} --mutant ", mutant));
    t.set_origins(1);
    return CreateTarget(t);
  };
  int64_t correct = proxy("proxy", 0);
  int64_t mutant = proxy("proxy-host", 3);
  v1::Run pass = WaitRun(Submit(spec, correct, 4, 1000).id(), seconds(90));
  v1::Run fail = WaitRun(Submit(spec, mutant, 2, 1000).id(), seconds(120));
  ASSERT_EQ(pass.state(), v1::RUN_STATE_PASSED) << pass.DebugString() << WorkerLogs();
  EXPECT_EQ(pass.counts().passed(), 4);
  ASSERT_EQ(fail.state(), v1::RUN_STATE_FAILED) << fail.DebugString() << WorkerLogs();
  std::vector<v1::Finding> groups = FindingsOfRun(fail.id());
  ASSERT_GE(groups.size(), 1u) << WorkerLogs();
  v1::Finding f = GetFinding(groups[0].id());
  EXPECT_EQ(f.kind(), v1::VERDICT_KIND_SAFETY);
  ASSERT_GE(f.counterexamples_size(), 1);
  EXPECT_LT(f.counterexamples(0).size(), f.counterexamples(0).unshrunk_size());
}

// A library interface (docs/interfaces.md) as a swarm: the jobs differ by
// seed, pool depth (drawn from the seed) and masks over the ops and laws.
// The correct heap keeps every law in every job; the mutant whose
// sift-down follows the larger child breaks a law, which is shrunk.
TEST_F(SwarmTest, InterfaceTargetsRunInTheServiceAsSwarms) {
  StartWorker("w1", 2);
  std::string spec = PushSpec("specs/heap.dspec");
  auto heap = [&](const std::string& name, int mutant) {
    v1::Target t;
    t.set_name(name);
    t.set_adapter("jsonl");
    t.set_launch(absl::StrCat(DS_LIB_HEAP, " --port {port} --arg mutant=", mutant));
    return CreateTarget(t);
  };
  int64_t correct = heap("heap", 0);
  int64_t mutant = heap("heap-larger-child", 2);
  v1::Run pass = WaitRun(Submit(spec, correct, 4, 2000, 0, 7, 1).id(), seconds(90));
  v1::Run fail = WaitRun(Submit(spec, mutant, 2, 3000, 0, 7, 1).id(), seconds(120));
  ASSERT_EQ(pass.state(), v1::RUN_STATE_PASSED) << pass.DebugString() << WorkerLogs();
  EXPECT_EQ(pass.counts().passed(), 4);
  ASSERT_EQ(fail.state(), v1::RUN_STATE_FAILED) << fail.DebugString() << WorkerLogs();
  std::vector<v1::Finding> groups = FindingsOfRun(fail.id());
  ASSERT_GE(groups.size(), 1u) << WorkerLogs();
  v1::Finding f = GetFinding(groups[0].id());
  EXPECT_EQ(f.kind(), v1::VERDICT_KIND_PROPERTY);
  ASSERT_GE(f.counterexamples_size(), 1);
  EXPECT_LT(f.counterexamples(0).size(), f.counterexamples(0).unshrunk_size());
}

// An explore run: its jobs model-check the spec (no target, no SUT), each
// trying requests in its own order (the swarm's branch orders), and stop
// at the first violation. The planted deep assert of
// bench/specs/deep_bug.dspec (11 requests in) is found and reported as a
// finding whose input is the request sequence; kv with two keys is free of
// violations to depth 3. An explore run names no target, and no user
// target may take the built-in one's name.
TEST_F(SwarmTest, AnExploreRunModelChecksTheSpecInItsJobsOrders) {
  StartWorker("w1", 2);
  const std::string deep = PushSpec("bench/specs/deep_bug.dspec");
  const std::string kv = PushSpec("specs/kv.dspec");
  auto submit = [&](const std::string& spec, int jobs, int depth, int64_t target, grpc::Status* status) {
    v1::SubmitRunRequest req;
    auto* t = req.mutable_template_();
    t->set_spec_hash(spec);
    t->set_target_id(target);
    t->set_jobs(jobs);
    t->set_seed(11);
    t->mutable_budget()->set_explore_depth(depth);
    t->mutable_budget()->set_time_budget_ms(30000);
    v1::Run run;
    *status = runs_->Submit(AuthContext(submitter_).get(), req, &run);
    return run;
  };
  grpc::Status s;
  const v1::Run deep_run = submit(deep, 4, 12, 0, &s);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(deep_run.template_().budget().explore_max_states(), 200000u) << "the default filled in";
  const v1::Run kv_run = submit(kv, 2, 3, 0, &s);
  ASSERT_TRUE(s.ok()) << s.error_message();

  const v1::Run fail = WaitRun(deep_run.id(), seconds(90));
  ASSERT_EQ(fail.state(), v1::RUN_STATE_FAILED) << fail.DebugString() << WorkerLogs();
  EXPECT_EQ(fail.counts().failed(), 4) << "every order reaches the bug within its budget";
  std::vector<v1::Finding> groups = FindingsOfRun(fail.id());
  ASSERT_EQ(groups.size(), 1u) << "one assert, one signature";
  v1::Finding f = GetFinding(groups[0].id());
  EXPECT_EQ(f.kind(), v1::VERDICT_KIND_SPEC_ERROR);
  EXPECT_TRUE(absl::StrContains(f.reason(), "assertion failed")) << f.reason();
  ASSERT_EQ(f.counterexamples_size(), 4);
  for (const auto& cx : f.counterexamples()) {
    EXPECT_GE(cx.size(), 11) << "a=3, b=2, c=4, d=1, then step";
    EXPECT_TRUE(absl::StrContains(cx.input_json(), R"({"op":"step"})")) << cx.input_json();
  }
  v1::ListJobsRequest jobs_req;
  jobs_req.set_run_id(fail.id());
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(runs_->ListJobs(AuthContext(submitter_).get(), jobs_req, &jobs).ok());
  std::set<int> orders;
  for (const auto& j : jobs.jobs()) orders.insert(j.branch_order());
  EXPECT_EQ(orders.size(), 4u) << "first, last, random, most-constrained (a second permutation)";

  const v1::Run pass = WaitRun(kv_run.id(), seconds(60));
  EXPECT_EQ(pass.state(), v1::RUN_STATE_PASSED) << pass.DebugString() << WorkerLogs();
  EXPECT_EQ(pass.counts().passed(), 2);

  const int64_t webdav = AddTarget("webdav", Webdav(0));
  submit(kv, 1, 3, webdav, &s);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "tests no target")) << s.error_message();
  // A testing run against the built-in target, an explore run of an
  // intermediary's spec: refused at once, not left to every job to fail.
  const int64_t builtin = fail.template_().target_id();
  v1::SubmitRunRequest testing;
  testing.mutable_template_()->set_spec_hash(kv);
  testing.mutable_template_()->set_target_id(builtin);
  testing.mutable_template_()->set_jobs(1);
  v1::Run unused;
  s = runs_->Submit(AuthContext(submitter_).get(), testing, &unused);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "built-in one of explore runs")) << s.error_message();
  submit(PushSpec("specs/http_proxy.dspec"), 1, 3, 0, &s);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "origin role")) << s.error_message();
  v1::CreateTargetRequest taken;
  taken.mutable_target()->set_name("explore");
  taken.mutable_target()->set_adapter("http");
  taken.mutable_target()->set_address("127.0.0.1:1");
  v1::Target t;
  s = targets_->Create(AuthContext(admin_).get(), taken, &t);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(s.error_message(), "reserved")) << s.error_message();
}

// A 3-node etcd cluster target with a nemesis: 8 jobs on 2 workers, each
// job killing and pausing members on its own seed's schedule. A correct
// etcd passes (a job whose history is beyond the checker's bound ends
// inconclusive, which counts as passed, never as a finding), and every job
// reports the faults it injected.
TEST_F(SwarmTest, AnEtcdClusterTargetUnderTheNemesisPassesAndItsJobsReportTheirFaults) {
  ASSERT_EQ(::access("/usr/bin/etcd", X_OK), 0) << "etcd-server is installed by scripts/setup.sh";
  std::string descriptor_set = Slurp(DS_ETCD_DESCRIPTOR_SET);
  ASSERT_FALSE(descriptor_set.empty()) << DS_ETCD_DESCRIPTOR_SET;
  StartWorker("w1", 1);
  StartWorker("w2", 1);
  std::string spec = PushSpec("specs/etcd_kv.dspec");
  v1::Target t;
  t.set_name("etcd3");
  t.set_adapter("grpc");
  t.set_descriptor_set(descriptor_set);
  t.set_launch(
      "/usr/bin/etcd --name n{node} --data-dir {dir}/data --listen-client-urls http://127.0.0.1:{port} "
      "--advertise-client-urls http://127.0.0.1:{port} --listen-peer-urls http://127.0.0.1:{peer_port} "
      "--initial-advertise-peer-urls http://127.0.0.1:{peer_port} --initial-cluster-state new "
      "--initial-cluster n0=http://127.0.0.1:{peer_port_0},n1=http://127.0.0.1:{peer_port_1},"
      "n2=http://127.0.0.1:{peer_port_2} --log-level error --logger zap");
  t.set_nodes(3);
  t.set_nemesis("pause,kill");
  t.set_fault_interval_ms(200);
  t.set_fault_duration_ms(500);
  int64_t target = CreateTarget(t);
  v1::Run run = WaitRun(Submit(spec, target, 8, 300, /*time_budget_ms=*/15000).id(), seconds(150));
  EXPECT_EQ(run.state(), v1::RUN_STATE_PASSED) << run.DebugString() << WorkerLogs();
  EXPECT_EQ(run.counts().passed(), 8) << WorkerLogs();
  v1::ListJobsRequest req;
  req.set_run_id(run.id());
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(runs_->ListJobs(AuthContext(submitter_).get(), req, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 8);
  for (const v1::Job& j : jobs.jobs()) EXPECT_GE(j.faults(), 1) << j.DebugString() << WorkerLogs();
}

// A spec handler that computes for ever (exponential recursion) held a
// worker slot for 75 s with a 3 s time budget, until the run was cancelled.
// The spec's evaluation limits (docs/spec-language.md, "Limits") now end it
// at once, as a spec error: a finding against the spec, never the SUT.
TEST_F(SwarmTest, ARunawaySpecHandlerEndsAtItsEvaluationLimit) {
  v1::CreateSpecRequest sreq;
  sreq.set_file_name("runaway.dspec");
  sreq.set_source(
      "spec runaway;\nuse http;\n"
      "fn f(n) { if n == 0 { 0 } else { f(n - 1) + f(n - 1) } }\n"
      "on recv q from c {\n  send c { status: 200 + f(60), headers: {}, body: \"\" };\n}\n"
      "gen request {\n  { method: \"GET\", path: \"/x\", headers: {}, body: \"\" }\n}\n");
  v1::CreateSpecResponse sresp;
  ASSERT_TRUE(specs_->Create(AuthContext(submitter_).get(), sreq, &sresp).ok());
  StartWorker("w1", 1);
  int64_t target = AddTarget("webdav-runaway", Webdav(0), /*ready_timeout_ms=*/2000);
  auto t0 = std::chrono::steady_clock::now();
  v1::Run run = WaitRun(Submit(sresp.spec().hash(), target, 1, 1000, /*time_budget_ms=*/3000).id(), seconds(60));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED) << run.DebugString() << WorkerLogs();
  auto findings = FindingsOfRun(run.id());
  ASSERT_EQ(findings.size(), 1u) << WorkerLogs();
  EXPECT_EQ(findings[0].kind(), v1::VERDICT_KIND_SPEC_ERROR) << findings[0].DebugString();
  EXPECT_TRUE(absl::StrContains(findings[0].reason(), "limit: evaluation steps")) << findings[0].DebugString();
  EXPECT_LT(took, 15);
  std::printf("[ measured ] runaway handler: run ended in %.1f s as a spec error\n", took);
}

// A job child that stops making progress for a reason no bound inside it
// can see (here SIGSTOP: wedged) is killed by the worker once it runs past
// readiness timeout + budget + grace, with its SUT, and reported as an
// error naming the budget, not a finding.
TEST_F(SwarmTest, AWedgedJobIsKilledPastItsBudgetWithItsSut) {
  Worker& w = StartWorker("w1", 1, {"--budget-grace", "2"});
  int64_t target = AddTarget("webdav-wedged", Webdav(0), /*ready_timeout_ms=*/2000);
  auto t0 = std::chrono::steady_clock::now();
  // Limit: 2 s readiness + 3 s budget + 2 s grace = 7 s.
  v1::Run submitted = Submit(PushSpec("specs/http_webdav.dspec"), target, 1, 1000000, /*time_budget_ms=*/3000);
  pid_t child = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = dualswarm::testing::RunCommand({"/usr/bin/pgrep", "-f", "run-job --job " + w.work_dir});
        return r.exit_code == 0 && absl::SimpleAtoi(absl::StripAsciiWhitespace(r.out), &child);
      },
      seconds(10)))
      << "no job child appeared" << WorkerLogs();
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  v1::Run run = WaitRun(submitted.id(), seconds(60));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(run.state(), v1::RUN_STATE_ERROR) << run.DebugString() << WorkerLogs();
  EXPECT_EQ(run.counts().error(), 1);
  EXPECT_LT(took, 15) << "the job was not stopped near its limit (7 s)";
  EXPECT_GE(took, 6.5) << "killed before its limit";
  std::string log = Slurp(w.log);
  EXPECT_TRUE(absl::StrContains(log, "timed out: the job ran past its time budget of 3000 ms")) << log;
  EXPECT_TRUE(FindingsOfRun(run.id()).empty()) << "a wedged tester is not a finding against the SUT";
  EXPECT_TRUE(WaitFor(
      [&] {
        return dualswarm::testing::RunCommand({"/usr/bin/pgrep", "-f", w.work_dir + "/job-"}).exit_code == 1;
      },
      seconds(5)))
      << "the tester or its SUT outlived the killed job";
  std::printf("[ measured ] wedged job, budget 3 s + ready 2 s + grace 2 s: run ended in %.1f s\n", took);
  // The slot is free again: a normal run passes.
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  v1::Run ok = WaitRun(Submit(PushSpec("specs/http_webdav.dspec"), good, 1, 200).id(), seconds(60));
  EXPECT_EQ(ok.state(), v1::RUN_STATE_PASSED) << ok.DebugString() << WorkerLogs();
}

TEST_F(SwarmTest, TwoRunsAtOnceShareTheWorkersFairly) {
  std::string spec = PushSpec("specs/http_webdav.dspec");
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  // Both runs wait in the queue before any worker exists; each job runs
  // for its 1.5 s time budget.
  v1::Run a = Submit(spec, good, 4, 1000000, /*time_budget_ms=*/1500);
  v1::Run b = Submit(spec, good, 4, 1000000, /*time_budget_ms=*/1500);
  StartWorker("w1", 1);
  StartWorker("w2", 1);
  a = WaitRun(a.id(), seconds(120));
  b = WaitRun(b.id(), seconds(120));
  ASSERT_EQ(a.state(), v1::RUN_STATE_PASSED) << a.DebugString() << WorkerLogs();
  ASSERT_EQ(b.state(), v1::RUN_STATE_PASSED) << b.DebugString() << WorkerLogs();
  auto secs = [](const google::protobuf::Timestamp& t) { return t.seconds() + t.nanos() / 1e9; };
  // Fair: the two slots go one to each run at once (first come, first
  // served would start run b only after run a's first two jobs, >= 1.5 s).
  EXPECT_LT(std::abs(secs(b.started_at()) - secs(a.started_at())), 1.0) << a.DebugString() << b.DebugString();
  // And they finish together rather than one after the other (>= 3 s apart).
  EXPECT_LT(std::abs(secs(b.finished_at()) - secs(a.finished_at())), 2.5) << a.DebugString() << b.DebugString();
}

TEST_F(SwarmTest, CancellingARunStopsItsRunningJobsAndFreesTheSlots) {
  std::string spec = PushSpec("specs/http_webdav.dspec");
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  Worker& w = StartWorker("w1", 2);
  v1::Run run = Submit(spec, good, 2, 100000000, /*time_budget_ms=*/120000);
  ASSERT_TRUE(WaitFor([&] { return GetRun(run.id()).counts().leased() == 2; }, seconds(30))) << WorkerLogs();
  v1::CancelRunRequest req;
  req.set_id(run.id());
  v1::Run cancelled;
  ASSERT_TRUE(runs_->Cancel(AuthContext(submitter_).get(), req, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::RUN_STATE_CANCELLED);
  auto t0 = std::chrono::steady_clock::now();
  // Told at the next heartbeat (1 s with --lease-ms 3000); the tester tears its SUT down.
  EXPECT_TRUE(WaitFor(
      [&] {
        std::string log = Slurp(w.log);
        size_t n = 0;
        for (size_t at = 0; (at = log.find("stopped (cancelled)", at)) != std::string::npos; ++at) ++n;
        return n == 2;
      },
      seconds(10)))
      << Slurp(w.log);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, seconds(10));
  EXPECT_TRUE(WaitFor(
      [&] {
        return dualswarm::testing::RunCommand({"/usr/bin/pgrep", "-f", w.work_dir + "/job-"}).exit_code == 1;
      },
      seconds(5)))
      << "a tester or SUT outlived the cancelled job";
  // The slots are free again: a new run passes.
  v1::Run next = WaitRun(Submit(spec, good, 2, 200).id(), seconds(60));
  EXPECT_EQ(next.state(), v1::RUN_STATE_PASSED) << WorkerLogs();
}

TEST_F(SwarmTest, SigtermDrainsRunningJobsAndExitsCleanly) {
  std::string spec = PushSpec("specs/http_webdav.dspec");
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  Worker& w = StartWorker("w1", 2, {"--metrics-listen", "127.0.0.1:0"});
  v1::Run run = Submit(spec, good, 2, 1000000, /*time_budget_ms=*/2000);
  ASSERT_TRUE(WaitFor([&] { return GetRun(run.id()).counts().leased() == 2; }, seconds(30))) << WorkerLogs();
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(StopWorker(w), 0) << Slurp(w.log);
  v1::Run after = GetRun(run.id());
  EXPECT_EQ(after.state(), v1::RUN_STATE_PASSED) << after.DebugString() << Slurp(w.log);
  EXPECT_EQ(after.counts().passed(), 2);
  EXPECT_TRUE(absl::StrContains(Slurp(w.log), "stopping: no new jobs")) << Slurp(w.log);
}

TEST_F(SwarmTest, WorkerMetricsCountJobsAndTesterWork) {
  std::string spec = PushSpec("specs/http_webdav.dspec");
  int64_t good = AddTarget("webdav-correct", Webdav(0));
  int64_t bad = AddTarget("webdav-mutant-1", Webdav(1));
  Worker& w = StartWorker("w1", 2, {"--metrics-listen", "127.0.0.1:0"});
  int port = dualswarm::testing::PortAfter(Slurp(w.log), "metrics on 127.0.0.1:");
  ASSERT_GT(port, 0) << Slurp(w.log);
  std::string text = dualswarm::testing::HttpGet(port, "/metrics");
  EXPECT_EQ(dualswarm::testing::MetricSample(text, "dualswarm_worker_slots"), 2.0) << text;
  EXPECT_EQ(dualswarm::testing::MetricSample(text, "dualswarm_worker_slots_busy"), 0.0) << text;

  v1::Run passed = WaitRun(Submit(spec, good, 3, 400).id(), seconds(60));
  v1::Run failed = WaitRun(Submit(spec, bad, 1, 400).id(), seconds(60));
  ASSERT_EQ(passed.state(), v1::RUN_STATE_PASSED) << WorkerLogs();
  ASSERT_EQ(failed.state(), v1::RUN_STATE_FAILED) << WorkerLogs();
  text = dualswarm::testing::HttpGet(port, "/metrics");
  EXPECT_EQ(dualswarm::testing::MetricSample(text, "dualswarm_worker_jobs_total{outcome=\"passed\"}"), 3.0) << text;
  EXPECT_EQ(dualswarm::testing::MetricSample(text, "dualswarm_worker_jobs_total{outcome=\"failed\"}"), 1.0) << text;
  EXPECT_EQ(dualswarm::testing::MetricSample(text, "dualswarm_worker_job_duration_seconds_count"), 4.0) << text;
  // 3 x 400 requests, plus the failing job's requests up to its finding.
  auto sent = dualswarm::testing::MetricSample(text, "dualswarm_worker_requests_sent_total");
  ASSERT_TRUE(sent.has_value()) << text;
  EXPECT_GT(*sent, 1200.0);
  auto reruns = dualswarm::testing::MetricSample(text, "dualswarm_worker_shrink_reruns_total");
  ASSERT_TRUE(reruns.has_value()) << text;
  EXPECT_GT(*reruns, 0.0);
  auto checks = dualswarm::testing::MetricSample(text, "dualswarm_worker_solver_checks_total");
  ASSERT_TRUE(checks.has_value()) << text;
  EXPECT_EQ(dualswarm::testing::MetricSample(text, "dualswarm_worker_slots_busy"), 0.0) << text;
}

}  // namespace
