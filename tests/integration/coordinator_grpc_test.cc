// End-to-end test of the dualswarm-coordinator binary over real gRPC: it
// starts with an embedded PostgreSQL in a temporary directory, tokens are
// made with `dualswarm-coordinator token create` next to the running server,
// and a client drives specs (validate/create/get/list), targets, runs and the
// worker protocol (register, lease, heartbeat, complete), checks the auth
// rules, and finally stops the server with SIGTERM.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "dualswarm/v1/finding.grpc.pb.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/common/kv_run.h"
#include "tests/common/processes.h"

namespace {

namespace v1 = ::dualswarm::v1;
using Clock = std::chrono::steady_clock;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::Slurp;

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-coord");
    ASSERT_FALSE(tmp_.empty());
    data_dir_ = tmp_ + "/data";
    coordinator_ = std::make_unique<CoordinatorProcess>(
        CoordinatorProcess::Options{DUALSWARM_COORDINATOR, tmp_, "", {"--lease-ms", "1000"}, 0});
    std::string err = coordinator_->Start();
    ASSERT_EQ(err, "");
    channel_ = coordinator_->channel();
    admin_ = coordinator_->Token("admin");
    submitter_ = coordinator_->Token("submitter");
    worker_ = coordinator_->Token("worker");
    ASSERT_FALSE(admin_.empty() || submitter_.empty() || worker_.empty());
  }

  void TearDown() override {
    coordinator_.reset();
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }

  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) { return dualswarm::testing::AuthContext(token); }

  // Pushes `source`, adds a jsonl target nobody serves, submits `jobs` jobs.
  v1::Run SubmitKv(const std::shared_ptr<grpc::Channel>& channel, const std::string& source, int jobs) {
    return dualswarm::testing::SubmitUnservedKvRun(channel, submitter_, admin_, absl::StrCat("kv-", ++targets_made_),
                                                   source, jobs);
  }

  std::string tmp_, data_dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::shared_ptr<grpc::Channel> channel_;
  std::string admin_, submitter_, worker_;
  int targets_made_ = 0;
};

TEST_F(CoordinatorTest, SpecsTargetsRunsAndTheWorkerProtocolOverGrpc) {
  auto specs = v1::SpecService::NewStub(channel_);
  auto targets = v1::TargetService::NewStub(channel_);
  auto runs = v1::RunService::NewStub(channel_);
  auto workers = v1::WorkerService::NewStub(channel_);
  auto findings = v1::FindingService::NewStub(channel_);
  ASSERT_TRUE(absl::StartsWith(admin_, "dst_"));

  // --- auth
  v1::ListSpecsRequest list_req;
  v1::ListSpecsResponse list_resp;
  EXPECT_EQ(specs->List(Ctx("").get(), list_req, &list_resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(specs->List(Ctx("dst_bogus").get(), list_req, &list_resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(specs->List(Ctx(worker_).get(), list_req, &list_resp).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(specs->List(Ctx(submitter_).get(), list_req, &list_resp).ok());

  // --- specs: every error with line and column
  v1::ValidateSpecRequest vreq;
  vreq.set_file_name("bad.dspec");
  vreq.set_source("spec bad\nvar x: int = ;\non recv R from C {\n  send nothing_defined;\n}\n");
  v1::ValidateSpecResponse vresp;
  ASSERT_TRUE(specs->Validate(Ctx(submitter_).get(), vreq, &vresp).ok());
  EXPECT_FALSE(vresp.valid());
  ASSERT_GE(vresp.errors_size(), 2) << "every error, not just the first";
  EXPECT_EQ(vresp.errors(0).line(), 2);
  EXPECT_EQ(vresp.errors(0).column(), 1);
  for (const auto& e : vresp.errors()) {
    EXPECT_EQ(e.file(), "bad.dspec");
    EXPECT_GT(e.line(), 0) << e.message();
    EXPECT_GT(e.column(), 0) << e.message();
  }
  v1::CreateSpecRequest bad;
  bad.set_file_name("bad.dspec");
  bad.set_source(vreq.source());
  v1::CreateSpecResponse created;
  grpc::Status st = specs->Create(Ctx(submitter_).get(), bad, &created);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "bad.dspec:2:1: ")) << st.error_message();
  EXPECT_TRUE(absl::StrContains(st.error_message(), "bad.dspec:2:14: ")) << st.error_message();

  std::string kv = Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec");
  ASSERT_FALSE(kv.empty());
  vreq.set_file_name("kv.dspec");
  vreq.set_source(kv);
  ASSERT_TRUE(specs->Validate(Ctx(submitter_).get(), vreq, &vresp).ok());
  EXPECT_TRUE(vresp.valid());
  v1::CreateSpecRequest good;
  good.set_file_name("kv.dspec");
  good.set_source(kv);
  ASSERT_TRUE(specs->Create(Ctx(submitter_).get(), good, &created).ok());
  EXPECT_TRUE(created.created());
  EXPECT_EQ(created.spec().hash(), vresp.hash());
  EXPECT_EQ(created.spec().name(), vresp.name());
  std::string spec_hash = created.spec().hash();
  ASSERT_TRUE(specs->Create(Ctx(submitter_).get(), good, &created).ok());
  EXPECT_FALSE(created.created()) << "content-addressed: stored once";
  v1::GetSpecRequest get;
  get.set_name(vresp.name());
  v1::Spec got;
  ASSERT_TRUE(specs->Get(Ctx(submitter_).get(), get, &got).ok());
  EXPECT_EQ(got.source(), kv);
  get.set_name("");
  get.set_hash(std::string(64, 'f'));
  EXPECT_EQ(specs->Get(Ctx(submitter_).get(), get, &got).error_code(), grpc::StatusCode::NOT_FOUND);

  // --- targets: admin only
  v1::CreateTargetRequest treq;
  treq.mutable_target()->set_name("kv-ref");
  treq.mutable_target()->set_adapter("jsonl");
  treq.mutable_target()->set_launch("/usr/bin/kv-server --port {port}");
  v1::Target target;
  EXPECT_EQ(targets->Create(Ctx(submitter_).get(), treq, &target).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(targets->Create(Ctx(admin_).get(), treq, &target).ok());
  EXPECT_GT(target.id(), 0);
  EXPECT_EQ(targets->Create(Ctx(admin_).get(), treq, &target).error_code(), grpc::StatusCode::ALREADY_EXISTS);

  // --- runs
  v1::SubmitRunRequest sreq;
  sreq.mutable_template_()->set_spec_hash(spec_hash);
  sreq.mutable_template_()->set_target_id(target.id());
  sreq.mutable_template_()->set_jobs(6);
  v1::Run run;
  EXPECT_EQ(runs->Submit(Ctx(worker_).get(), sreq, &run).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(runs->Submit(Ctx(submitter_).get(), sreq, &run).ok());
  EXPECT_EQ(run.state(), v1::RUN_STATE_QUEUED);
  EXPECT_EQ(run.counts().total(), 6);
  EXPECT_EQ(run.submitted_by(), "submitter-test");
  EXPECT_NE(run.template_().seed(), 0u);
  v1::SubmitRunRequest bad_run = sreq;
  bad_run.mutable_template_()->set_jobs(0);
  v1::Run ignored;
  EXPECT_EQ(runs->Submit(Ctx(submitter_).get(), bad_run, &ignored).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  bad_run.mutable_template_()->set_jobs(1);
  bad_run.mutable_template_()->set_target_id(999);
  EXPECT_EQ(runs->Submit(Ctx(submitter_).get(), bad_run, &ignored).error_code(), grpc::StatusCode::NOT_FOUND);
  // A gen the spec does not have is refused at submit, naming the spec's gens
  // (every job would error otherwise).
  bad_run = sreq;
  bad_run.mutable_template_()->set_gen("requests");
  st = runs->Submit(Ctx(submitter_).get(), bad_run, &ignored);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  EXPECT_TRUE(absl::StrContains(st.error_message(), "no gen block \"requests\"; its gen blocks: request"))
      << st.error_message();
  // A NUL in a spec is refused (it was validated and hashed whole, stored cut
  // at the NUL), in Validate and in Create.
  std::string with_nul = kv + std::string("\0// after the NUL\n", 18);
  v1::ValidateSpecRequest nul_validate;
  nul_validate.set_source(with_nul);
  st = specs->Validate(Ctx(submitter_).get(), nul_validate, &vresp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "source contains a NUL byte")) << st.error_message();
  v1::CreateSpecRequest nul_create;
  nul_create.set_source(with_nul);
  st = specs->Create(Ctx(submitter_).get(), nul_create, &created);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "source contains a NUL byte")) << st.error_message();

  // --- the worker protocol
  v1::RegisterWorkerRequest rreq;
  rreq.set_name("test-worker");
  rreq.set_slots(8);
  rreq.add_adapters("jsonl");
  v1::RegisterWorkerResponse reg;
  EXPECT_EQ(workers->Register(Ctx(submitter_).get(), rreq, &reg).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(workers->Register(Ctx(worker_).get(), rreq, &reg).ok());
  EXPECT_FALSE(reg.worker_id().empty());
  EXPECT_EQ(reg.lease_duration_ms(), 1000);

  v1::LeaseJobsRequest lreq;
  lreq.set_worker_id(reg.worker_id());
  lreq.set_max_jobs(8);
  v1::LeaseJobsResponse leased;
  ASSERT_TRUE(workers->LeaseJobs(Ctx(worker_).get(), lreq, &leased).ok());
  ASSERT_EQ(leased.jobs_size(), 6);
  std::set<uint64_t> seeds;
  std::set<int> orders;
  for (const auto& j : leased.jobs()) {
    seeds.insert(j.seed());
    orders.insert(j.branch_order());
    EXPECT_EQ(j.spec().source(), kv);
    EXPECT_EQ(j.target().name(), "kv-ref");
    EXPECT_EQ(j.budget().steps(), 1000u);
    EXPECT_EQ(j.attempt(), 1);
  }
  EXPECT_EQ(seeds.size(), 6u);
  EXPECT_EQ(orders.size(), 4u);
  lreq.set_wait_ms(300);  // long-poll: nothing left, returns empty after the wait
  auto t0 = Clock::now();
  v1::LeaseJobsResponse none;
  ASSERT_TRUE(workers->LeaseJobs(Ctx(worker_).get(), lreq, &none).ok());
  EXPECT_EQ(none.jobs_size(), 0);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(250));
  v1::LeaseJobsRequest unknown = lreq;
  unknown.set_worker_id("no-such-worker");
  EXPECT_EQ(workers->LeaseJobs(Ctx(worker_).get(), unknown, &none).error_code(), grpc::StatusCode::NOT_FOUND);

  v1::HeartbeatRequest hb;
  hb.set_worker_id(reg.worker_id());
  for (const auto& j : leased.jobs()) {
    auto* p = hb.add_progress();
    p->set_job_id(j.job_id());
    p->set_lease_token(j.lease_token());
  }
  v1::HeartbeatResponse hbr;
  ASSERT_TRUE(workers->Heartbeat(Ctx(worker_).get(), hb, &hbr).ok());
  EXPECT_EQ(hbr.lost_job_ids_size(), 0);
  EXPECT_EQ(hbr.cancel_job_ids_size(), 0);

  for (int i = 0; i < leased.jobs_size(); ++i) {
    const auto& j = leased.jobs(i);
    v1::CompleteJobRequest c;
    c.set_worker_id(reg.worker_id());
    c.set_job_id(j.job_id());
    c.set_lease_token(j.lease_token());
    if (i == 0) {
      c.set_outcome(v1::JOB_OUTCOME_FAILED);
      c.mutable_counterexample()->set_kind(v1::VERDICT_KIND_SAFETY);
      c.mutable_counterexample()->set_reason("stale read");
      c.mutable_counterexample()->set_signature("sig-1");
      c.mutable_counterexample()->set_size(3);
    } else {
      c.set_outcome(v1::JOB_OUTCOME_PASSED);
    }
    v1::CompleteJobResponse cr;
    ASSERT_TRUE(workers->CompleteJob(Ctx(worker_).get(), c, &cr).ok());
    EXPECT_FALSE(cr.duplicate());
    ASSERT_TRUE(workers->CompleteJob(Ctx(worker_).get(), c, &cr).ok());
    EXPECT_TRUE(cr.duplicate()) << "completing twice is harmless";
    c.set_lease_token("00000000-0000-0000-0000-000000000000");
    EXPECT_EQ(workers->CompleteJob(Ctx(worker_).get(), c, &cr).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  }

  v1::GetRunRequest greq;
  greq.set_id(run.id());
  ASSERT_TRUE(runs->Get(Ctx(submitter_).get(), greq, &run).ok());
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_EQ(run.counts().passed(), 5);
  EXPECT_EQ(run.counts().failed(), 1);
  greq.set_id(424242);
  EXPECT_EQ(runs->Get(Ctx(submitter_).get(), greq, &ignored).error_code(), grpc::StatusCode::NOT_FOUND);
  greq.set_id(-1);
  EXPECT_EQ(runs->Get(Ctx(submitter_).get(), greq, &ignored).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  // Watch a finished run: one final event.
  v1::WatchRunRequest wreq;
  wreq.set_id(run.id());
  auto wctx = Ctx(submitter_);
  auto reader = runs->Watch(wctx.get(), wreq);
  v1::RunEvent ev;
  ASSERT_TRUE(reader->Read(&ev));
  EXPECT_TRUE(ev.final());
  EXPECT_EQ(ev.run().state(), v1::RUN_STATE_FAILED);
  EXPECT_FALSE(reader->Read(&ev));
  EXPECT_TRUE(reader->Finish().ok());

  // Findings.
  v1::ListFindingsRequest freq;
  freq.set_run_id(run.id());
  v1::ListFindingsResponse fl;
  ASSERT_TRUE(findings->List(Ctx(submitter_).get(), freq, &fl).ok());
  ASSERT_EQ(fl.findings_size(), 1);
  EXPECT_EQ(fl.findings(0).signature(), "sig-1");
  v1::GetFindingRequest gf;
  gf.set_id(fl.findings(0).id());
  v1::Finding f;
  ASSERT_TRUE(findings->Get(Ctx(submitter_).get(), gf, &f).ok());
  ASSERT_EQ(f.counterexamples_size(), 1);
  EXPECT_EQ(f.counterexamples(0).seed(), leased.jobs(0).seed());

  // --- a clean shutdown stops the embedded PostgreSQL too.
  EXPECT_EQ(coordinator_->Stop(), 0) << coordinator_->log();
  EXPECT_NE(access((data_dir_ + "/pg/postmaster.pid").c_str(), F_OK), 0);
}

TEST_F(CoordinatorTest, ExpiredLeasesAreHandedToAnotherWorker) {
  auto workers = v1::WorkerService::NewStub(channel_);
  auto runs = v1::RunService::NewStub(channel_);
  v1::Run run = SubmitKv(channel_, Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec"), 1);
  ASSERT_FALSE(HasFailure());

  v1::RegisterWorkerRequest rreq;
  rreq.set_name("w");
  rreq.set_slots(1);
  v1::RegisterWorkerResponse a, b;
  ASSERT_TRUE(workers->Register(Ctx(worker_).get(), rreq, &a).ok());
  ASSERT_TRUE(workers->Register(Ctx(worker_).get(), rreq, &b).ok());
  v1::LeaseJobsRequest la;
  la.set_worker_id(a.worker_id());
  la.set_max_jobs(1);
  v1::LeaseJobsResponse ja, jb;
  ASSERT_TRUE(workers->LeaseJobs(Ctx(worker_).get(), la, &ja).ok());
  ASSERT_EQ(ja.jobs_size(), 1);
  // Worker A goes silent; B long-polls and gets the job once A's 1 s lease ends.
  v1::LeaseJobsRequest lb;
  lb.set_worker_id(b.worker_id());
  lb.set_max_jobs(1);
  lb.set_wait_ms(5000);
  ASSERT_TRUE(workers->LeaseJobs(Ctx(worker_).get(), lb, &jb).ok());
  ASSERT_EQ(jb.jobs_size(), 1);
  EXPECT_EQ(jb.jobs(0).job_id(), ja.jobs(0).job_id());
  EXPECT_EQ(jb.jobs(0).attempt(), 2);
  // A's heartbeat learns the job is lost; A's completion is refused.
  v1::HeartbeatRequest hb;
  hb.set_worker_id(a.worker_id());
  auto* p = hb.add_progress();
  p->set_job_id(ja.jobs(0).job_id());
  p->set_lease_token(ja.jobs(0).lease_token());
  v1::HeartbeatResponse hbr;
  ASSERT_TRUE(workers->Heartbeat(Ctx(worker_).get(), hb, &hbr).ok());
  ASSERT_EQ(hbr.lost_job_ids_size(), 1);
  v1::CompleteJobRequest c;
  c.set_worker_id(a.worker_id());
  c.set_job_id(ja.jobs(0).job_id());
  c.set_lease_token(ja.jobs(0).lease_token());
  c.set_outcome(v1::JOB_OUTCOME_PASSED);
  v1::CompleteJobResponse cr;
  EXPECT_EQ(workers->CompleteJob(Ctx(worker_).get(), c, &cr).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  c.set_worker_id(b.worker_id());
  c.set_lease_token(jb.jobs(0).lease_token());
  ASSERT_TRUE(workers->CompleteJob(Ctx(worker_).get(), c, &cr).ok());
  v1::GetRunRequest greq;
  greq.set_id(run.id());
  ASSERT_TRUE(runs->Get(Ctx(submitter_).get(), greq, &run).ok());
  EXPECT_EQ(run.state(), v1::RUN_STATE_PASSED);
}

// A lease of many jobs whose spec is large stops at the response budget
// (8 MiB) and leaves the rest queued; a worker that lists the version in
// known_spec_hashes gets its jobs without the source.
TEST_F(CoordinatorTest, LeaseResponsesStayWithinTheirBudgetAndLeaveKnownSourcesOut) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  auto channel = grpc::CreateCustomChannel(coordinator_->address(), grpc::InsecureChannelCredentials(), args);
  auto workers = v1::WorkerService::NewStub(channel);
  // specs/kv.dspec padded with comments to ~1,000,000 bytes (the limit is 1 MiB).
  std::string source = Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec");
  while (source.size() < 1000000) source += "// " + std::string(96, 'x') + "\n";
  constexpr int kJobs = 12;
  v1::Run run = SubmitKv(channel, source, kJobs);
  ASSERT_FALSE(HasFailure());
  const std::string hash = run.template_().spec_hash();
  v1::RegisterWorkerRequest rreq;
  rreq.set_name("w");
  rreq.set_slots(kJobs);
  v1::RegisterWorkerResponse w;
  ASSERT_TRUE(workers->Register(Ctx(worker_).get(), rreq, &w).ok());

  v1::LeaseJobsRequest lease;
  lease.set_worker_id(w.worker_id());
  lease.set_max_jobs(kJobs);
  lease.set_wait_ms(2000);
  v1::LeaseJobsResponse first;
  grpc::Status st = workers->LeaseJobs(Ctx(worker_).get(), lease, &first);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_GE(first.jobs_size(), 1);
  EXPECT_LT(first.jobs_size(), kJobs) << "12 jobs of a 1 MB spec exceed the 8 MiB budget";
  EXPECT_LE(first.ByteSizeLong(), size_t{8} << 20);
  std::set<int64_t> seen;
  for (const auto& j : first.jobs()) {
    EXPECT_EQ(j.spec().source(), source);
    seen.insert(j.job_id());
  }

  // The rest, quickly (the fixture's leases last 1 s), without the source.
  lease.add_known_spec_hashes(hash);
  for (int call = 0; call < 5 && seen.size() < static_cast<size_t>(kJobs); ++call) {
    v1::LeaseJobsResponse more;
    st = workers->LeaseJobs(Ctx(worker_).get(), lease, &more);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_LT(more.ByteSizeLong(), size_t{64} << 10) << "sources of a known version were sent";
    for (const auto& j : more.jobs()) {
      EXPECT_TRUE(j.spec().source().empty());
      EXPECT_EQ(j.spec().hash(), hash);
      seen.insert(j.job_id());
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kJobs)) << "jobs past the budget were not leased later";

  for (int i = 0; i < 257; ++i) lease.add_known_spec_hashes(absl::StrCat("h", i));
  v1::LeaseJobsResponse refused;
  st = workers->LeaseJobs(Ctx(worker_).get(), lease, &refused);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
}

}  // namespace
