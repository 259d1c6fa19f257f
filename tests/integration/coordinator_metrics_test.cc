// The coordinator's Prometheus metrics and its long-poll, through the real
// binary: dualswarm-coordinator runs with --metrics-listen 127.0.0.1:0 on an
// embedded PostgreSQL, a client drives specs, targets, a run and the worker
// protocol over gRPC (one FAILED completion), and /metrics, fetched with a
// plain HTTP GET, must show what happened: jobs and runs by state, the
// counterexample and its finding group, the live worker, lease latency and
// job duration histograms, RPCs by method and code. Also: a LeaseJobs
// long-poll returns as soon as a run is submitted, many waiting long-polls
// starve nothing, and an explicit metrics address that is taken is a
// start-up error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/common/http_get.h"
#include "tests/common/processes.h"

namespace {

namespace v1 = ::dualswarm::v1;
using Clock = std::chrono::steady_clock;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::PortAfter;

using dualswarm::testing::HttpGet;

// The value of the series `series` (name plus labels exactly as exposed,
// e.g. dualswarm_jobs{state="passed"}), or NaN when absent.
double Metric(const std::string& text, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, series + " ")) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(series.size() + 1), &v)) return v;
  }
  return std::nan("");
}

class CoordinatorMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-metrics");
    ASSERT_FALSE(tmp_.empty());
    coordinator_ = std::make_unique<CoordinatorProcess>(CoordinatorProcess::Options{
        DUALSWARM_COORDINATOR,
        tmp_,
        "",
        // A slow fallback poll: a waiting LeaseJobs that returns at once was woken.
        {"--lease-ms", "1000", "--metrics-listen", "127.0.0.1:0", "--lease-poll-ms", "5000"},
        0});
    ASSERT_EQ(coordinator_->Start(), "");
    metrics_port_ = PortAfter(coordinator_->log(), "metrics on 127.0.0.1:");
    ASSERT_GT(metrics_port_, 0) << coordinator_->log();
    channel_ = coordinator_->channel();
    admin_ = coordinator_->Token("admin");
    submitter_ = coordinator_->Token("submitter");
    worker_ = coordinator_->Token("worker");
    ASSERT_FALSE(admin_.empty() || submitter_.empty() || worker_.empty());

    auto specs = v1::SpecService::NewStub(channel_);
    v1::CreateSpecRequest sreq;
    sreq.set_file_name("kv.dspec");
    sreq.set_source(dualswarm::testing::Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec"));
    v1::CreateSpecResponse spec;
    ASSERT_TRUE(specs->Create(Ctx(submitter_).get(), sreq, &spec).ok());
    spec_hash_ = spec.spec().hash();
    auto targets = v1::TargetService::NewStub(channel_);
    v1::CreateTargetRequest treq;
    treq.mutable_target()->set_name("kv");
    treq.mutable_target()->set_adapter("jsonl");
    treq.mutable_target()->set_address("127.0.0.1:9");
    v1::Target target;
    ASSERT_TRUE(targets->Create(Ctx(admin_).get(), treq, &target).ok());
    target_id_ = target.id();
  }

  void TearDown() override {
    coordinator_.reset();
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }

  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) { return dualswarm::testing::AuthContext(token); }

  // Registers a worker with the worker token; returns its id.
  std::string RegisterWorker(const std::string& name, int slots) {
    auto workers = v1::WorkerService::NewStub(channel_);
    v1::RegisterWorkerRequest rreq;
    rreq.set_name(name);
    rreq.set_slots(slots);
    v1::RegisterWorkerResponse reg;
    grpc::Status st = workers->Register(Ctx(worker_).get(), rreq, &reg);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return reg.worker_id();
  }

  v1::Run Submit(int jobs) {
    auto runs = v1::RunService::NewStub(channel_);
    v1::SubmitRunRequest req;
    req.mutable_template_()->set_spec_hash(spec_hash_);
    req.mutable_template_()->set_target_id(target_id_);
    req.mutable_template_()->set_jobs(jobs);
    v1::Run run;
    grpc::Status st = runs->Submit(Ctx(submitter_).get(), req, &run);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return run;
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::shared_ptr<grpc::Channel> channel_;
  int metrics_port_ = 0;
  std::string admin_, submitter_, worker_, spec_hash_;
  int64_t target_id_ = 0;
};

TEST_F(CoordinatorMetricsTest, MetricsShowRunsJobsFindingsWorkersAndRpcs) {
  // Served from the start, database gauges included.
  int status = 0;
  std::string text = HttpGet(metrics_port_, "/metrics", &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(Metric(text, "dualswarm_database_up"), 1) << text;
  EXPECT_EQ(Metric(text, "dualswarm_runs{state=\"queued\"}"), 0) << text;

  Submit(4);
  auto workers = v1::WorkerService::NewStub(channel_);
  v1::RegisterWorkerRequest rreq;
  rreq.set_name("metrics-worker");
  rreq.set_slots(4);
  v1::RegisterWorkerResponse reg;
  EXPECT_EQ(workers->Register(Ctx(submitter_).get(), rreq, &reg).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(workers->Register(Ctx(worker_).get(), rreq, &reg).ok());
  v1::LeaseJobsRequest lreq;
  lreq.set_worker_id(reg.worker_id());
  lreq.set_max_jobs(4);
  v1::LeaseJobsResponse leased;
  ASSERT_TRUE(workers->LeaseJobs(Ctx(worker_).get(), lreq, &leased).ok());
  ASSERT_EQ(leased.jobs_size(), 4);
  for (int i = 0; i < leased.jobs_size(); ++i) {
    v1::CompleteJobRequest c;
    c.set_worker_id(reg.worker_id());
    c.set_job_id(leased.jobs(i).job_id());
    c.set_lease_token(leased.jobs(i).lease_token());
    c.set_seconds(0.5);
    if (i == 0) {
      c.set_outcome(v1::JOB_OUTCOME_FAILED);
      c.mutable_counterexample()->set_kind(v1::VERDICT_KIND_SAFETY);
      c.mutable_counterexample()->set_reason("stale read");
      c.mutable_counterexample()->set_signature("sig-metrics");
      c.mutable_counterexample()->set_size(2);
    } else {
      c.set_outcome(v1::JOB_OUTCOME_PASSED);
    }
    v1::CompleteJobResponse cr;
    ASSERT_TRUE(workers->CompleteJob(Ctx(worker_).get(), c, &cr).ok());
    if (i == 1) {  // a duplicate is not counted again
      ASSERT_TRUE(workers->CompleteJob(Ctx(worker_).get(), c, &cr).ok());
      EXPECT_TRUE(cr.duplicate());
    }
  }

  // The database gauges follow within a refresh period (2 s).
  auto deadline = Clock::now() + std::chrono::seconds(15);
  do {
    text = HttpGet(metrics_port_, "/metrics");
    if (Metric(text, "dualswarm_jobs{state=\"passed\"}") == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (Clock::now() < deadline);
  EXPECT_EQ(Metric(text, "dualswarm_jobs{state=\"passed\"}"), 3) << text;
  EXPECT_EQ(Metric(text, "dualswarm_jobs{state=\"failed\"}"), 1) << text;
  EXPECT_EQ(Metric(text, "dualswarm_jobs{state=\"queued\"}"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_jobs{state=\"leased\"}"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_runs{state=\"failed\"}"), 1) << text;
  EXPECT_EQ(Metric(text, "dualswarm_runs{state=\"running\"}"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_findings"), 1) << text;
  EXPECT_EQ(Metric(text, "dualswarm_workers_alive"), 1) << text;
  // Events, counted as they happen.
  EXPECT_EQ(Metric(text, "dualswarm_counterexamples_total"), 1) << text;
  EXPECT_EQ(Metric(text, "dualswarm_jobs_completed_total{outcome=\"passed\"}"), 3) << text;
  EXPECT_EQ(Metric(text, "dualswarm_jobs_completed_total{outcome=\"failed\"}"), 1) << text;
  EXPECT_EQ(Metric(text, "dualswarm_jobs_leased_total"), 4) << text;
  EXPECT_EQ(Metric(text, "dualswarm_lease_latency_seconds_count"), 1) << text;
  EXPECT_GE(Metric(text, "dualswarm_lease_query_seconds_count"), 1) << text;
  // One lease is no demand: the lease pool prefetched nothing.
  EXPECT_EQ(Metric(text, "dualswarm_lease_pool_jobs_total"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_lease_pool_held"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_lease_pool_returned_total"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_campaign_firings_total{result=\"submitted\"}"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_job_duration_seconds_count"), 4) << text;
  EXPECT_DOUBLE_EQ(Metric(text, "dualswarm_job_duration_seconds_sum"), 2.0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_job_duration_seconds_bucket{le=\"0.1\"}"), 0) << text;
  EXPECT_EQ(Metric(text, "dualswarm_job_duration_seconds_bucket{le=\"0.5\"}"), 4) << text;
  EXPECT_EQ(Metric(text, "dualswarm_rpcs_total{code=\"OK\",method=\"WorkerService/LeaseJobs\"}"), 1) << text;
  EXPECT_EQ(Metric(text, "dualswarm_rpcs_total{code=\"OK\",method=\"WorkerService/CompleteJob\"}"), 5) << text;
  EXPECT_EQ(Metric(text, "dualswarm_rpcs_total{code=\"PERMISSION_DENIED\",method=\"WorkerService/Register\"}"), 1)
      << text;

  // A worker that stops calling is no longer alive after 3 lease durations (3 s).
  deadline = Clock::now() + std::chrono::seconds(15);
  do {
    text = HttpGet(metrics_port_, "/metrics");
    if (Metric(text, "dualswarm_workers_alive") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  } while (Clock::now() < deadline);
  EXPECT_EQ(Metric(text, "dualswarm_workers_alive"), 0) << text;
}

// A worker leasing one job at a time as fast as it can: the lease pool
// starts serving leases from jobs it leased ahead, every job is still
// handed out once, and the run ends passed.
TEST_F(CoordinatorMetricsTest, FastLeasesAreServedFromTheLeasePool) {
  constexpr int kJobs = 400;
  v1::Run run = Submit(kJobs);
  auto workers = v1::WorkerService::NewStub(channel_);
  const std::string worker_id = RegisterWorker("fast", 1);
  ASSERT_FALSE(worker_id.empty());
  std::set<int64_t> seen;
  for (int i = 0; i < kJobs; ++i) {
    v1::LeaseJobsRequest lreq;
    lreq.set_worker_id(worker_id);
    lreq.set_max_jobs(1);
    lreq.set_wait_ms(2000);
    v1::LeaseJobsResponse leased;
    ASSERT_TRUE(workers->LeaseJobs(Ctx(worker_).get(), lreq, &leased).ok());
    ASSERT_EQ(leased.jobs_size(), 1) << "lease " << i;
    EXPECT_TRUE(seen.insert(leased.jobs(0).job_id()).second) << "job handed out twice";
    v1::CompleteJobRequest c;
    c.set_worker_id(worker_id);
    c.set_job_id(leased.jobs(0).job_id());
    c.set_lease_token(leased.jobs(0).lease_token());
    c.set_outcome(v1::JOB_OUTCOME_PASSED);
    v1::CompleteJobResponse cr;
    ASSERT_TRUE(workers->CompleteJob(Ctx(worker_).get(), c, &cr).ok());
  }
  std::string text = HttpGet(metrics_port_, "/metrics");
  EXPECT_EQ(Metric(text, "dualswarm_jobs_leased_total"), kJobs) << text;
  EXPECT_GT(Metric(text, "dualswarm_lease_pool_jobs_total"), 0) << text;
  // Fewer database lease statements than leases.
  EXPECT_LT(Metric(text, "dualswarm_lease_query_seconds_count"), kJobs) << text;
  auto runs = v1::RunService::NewStub(channel_);
  v1::GetRunRequest greq;
  greq.set_id(run.id());
  v1::Run got;
  ASSERT_TRUE(runs->Get(Ctx(submitter_).get(), greq, &got).ok());
  EXPECT_EQ(got.state(), v1::RUN_STATE_PASSED);
}

TEST_F(CoordinatorMetricsTest, LongPollReturnsAsSoonAsARunIsSubmitted) {
  auto workers = v1::WorkerService::NewStub(channel_);
  const std::string worker_id = RegisterWorker("poller", 1);
  ASSERT_FALSE(worker_id.empty());
  v1::LeaseJobsRequest lreq;
  lreq.set_worker_id(worker_id);
  lreq.set_max_jobs(1);
  lreq.set_wait_ms(20000);
  auto poll = std::async(std::launch::async, [&] {
    v1::LeaseJobsResponse resp;
    grpc::Status st = workers->LeaseJobs(Ctx(worker_).get(), lreq, &resp);
    return std::make_pair(st.ok(), std::make_pair(resp.jobs_size(), Clock::now()));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the poll is waiting
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  auto submitted = Clock::now();
  Submit(1);
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  auto [ok, got] = poll.get();
  EXPECT_TRUE(ok);
  EXPECT_EQ(got.first, 1);
  // Woken by the Submit, not by the fallback poll (5 s) or the end of the wait.
  EXPECT_LT(got.second - submitted, std::chrono::milliseconds(1500));
}

TEST_F(CoordinatorMetricsTest, WaitingLeasesDoNotStarveOtherCalls) {
  // Each waiting LeaseJobs holds a sync-server thread (but no database
  // connection): 40 of them, more than --db-pool, and other calls are still
  // answered at once, and a submitted run still reaches a waiting worker.
  auto workers = v1::WorkerService::NewStub(channel_);
  const std::string worker_id = RegisterWorker("many", 1);
  ASSERT_FALSE(worker_id.empty());
  constexpr int kPolls = 40;
  std::atomic<int> failed{0};
  std::mutex mu;
  std::set<int64_t> got;  // leases expire after 1 s and may be handed out again
  std::vector<std::thread> polls;
  for (int i = 0; i < kPolls; ++i)
    polls.emplace_back([&] {
      v1::LeaseJobsRequest lreq;
      lreq.set_worker_id(worker_id);
      lreq.set_max_jobs(1);
      lreq.set_wait_ms(4000);
      v1::LeaseJobsResponse resp;
      if (!workers->LeaseJobs(Ctx(worker_).get(), lreq, &resp).ok()) ++failed;
      std::lock_guard<std::mutex> lock(mu);
      for (const auto& j : resp.jobs()) got.insert(j.job_id());
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // all are waiting
  auto specs = v1::SpecService::NewStub(channel_);
  auto t0 = Clock::now();
  v1::ListSpecsRequest list;
  v1::ListSpecsResponse specs_resp;
  EXPECT_TRUE(specs->List(Ctx(submitter_).get(), list, &specs_resp).ok());
  EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(1000));
  Submit(3);
  for (auto& t : polls) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(got.size(), 3u);
}

TEST_F(CoordinatorMetricsTest, AnExplicitMetricsAddressThatIsTakenIsAnError) {
  // A second coordinator next to the first (it attaches to the running
  // embedded PostgreSQL) cannot have the first one's metrics port.
  auto r = dualswarm::testing::RunCommand({DUALSWARM_COORDINATOR, "--listen", "127.0.0.1:0", "--data-dir",
                                           coordinator_->data_dir(), "--metrics-listen",
                                           absl::StrCat("127.0.0.1:", metrics_port_)});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "cannot serve metrics on 127.0.0.1:")) << r.err;
  // The first one still serves.
  int status = 0;
  HttpGet(metrics_port_, "/metrics", &status);
  EXPECT_EQ(status, 200);
}

}  // namespace
