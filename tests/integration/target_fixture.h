// TargetCoordinatorTest: a dualswarm-coordinator binary (embedded
// PostgreSQL in a fresh directory) with admin and worker tokens, the CLI
// pointed at it, and LeaseOneJob — what the tests of what a target carries
// (grpc descriptor sets, cluster nodes) check end to end: a target's fields
// go in through TargetService or `dualswarm target add` and come out in a
// job a worker leases.
#ifndef DUALSWARM_TESTS_INTEGRATION_TARGET_FIXTURE_H_
#define DUALSWARM_TESTS_INTEGRATION_TARGET_FIXTURE_H_

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "tests/common/processes.h"

namespace dualswarm::coord::testing {

class TargetCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = dualswarm::testing::MakeTempDir("ds-target");
    ASSERT_FALSE(tmp_.empty());
    coordinator_ = std::make_unique<dualswarm::testing::CoordinatorProcess>(
        dualswarm::testing::CoordinatorProcess::Options{DUALSWARM_COORDINATOR, tmp_, "", {}, 0});
    ASSERT_EQ(coordinator_->Start(), "");
    admin_ = coordinator_->Token("admin");
    worker_ = coordinator_->Token("worker");
    ASSERT_FALSE(admin_.empty() || worker_.empty());
  }

  void TearDown() override {
    coordinator_.reset();
    std::error_code ec;
    std::filesystem::remove_all(tmp_, ec);
  }

  auto Ctx(const std::string& token) { return dualswarm::testing::AuthContext(token); }

  // `dualswarm ARGS` against the coordinator, as admin.
  dualswarm::testing::CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), DUALSWARM_CLI);
    return dualswarm::testing::RunCommand(args,
                                          {{"DUALSWARM_ADDR", coordinator_->address()}, {"DUALSWARM_TOKEN", admin_}});
  }

  // Pushes specs/`spec_file`, submits a one-job run against `target_id`,
  // registers a worker for `adapter` and leases the job into *job.
  void LeaseOneJob(int64_t target_id, const std::string& spec_file, const std::string& adapter, v1::LeasedJob* job) {
    auto channel = coordinator_->channel();
    v1::CreateSpecRequest spec;
    spec.set_file_name(spec_file);
    spec.set_source(dualswarm::testing::Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/" + spec_file));
    v1::CreateSpecResponse spec_created;
    grpc::Status st = v1::SpecService::NewStub(channel)->Create(Ctx(admin_).get(), spec, &spec_created);
    ASSERT_TRUE(st.ok()) << st.error_message();
    v1::SubmitRunRequest sreq;
    sreq.mutable_template_()->set_spec_hash(spec_created.spec().hash());
    sreq.mutable_template_()->set_target_id(target_id);
    sreq.mutable_template_()->set_jobs(1);
    v1::Run run;
    st = v1::RunService::NewStub(channel)->Submit(Ctx(admin_).get(), sreq, &run);
    ASSERT_TRUE(st.ok()) << st.error_message();
    auto workers = v1::WorkerService::NewStub(channel);
    v1::RegisterWorkerRequest rreq;
    rreq.set_name("w");
    rreq.set_slots(1);
    rreq.add_adapters(adapter);
    v1::RegisterWorkerResponse w;
    ASSERT_TRUE(workers->Register(Ctx(worker_).get(), rreq, &w).ok());
    v1::LeaseJobsRequest lease;
    lease.set_worker_id(w.worker_id());
    lease.set_max_jobs(1);
    lease.set_wait_ms(5000);
    v1::LeaseJobsResponse leased;
    st = workers->LeaseJobs(Ctx(worker_).get(), lease, &leased);
    ASSERT_TRUE(st.ok()) << st.error_message();
    ASSERT_EQ(leased.jobs_size(), 1);
    *job = leased.jobs(0);
  }

  std::string tmp_;
  std::unique_ptr<dualswarm::testing::CoordinatorProcess> coordinator_;
  std::string admin_, worker_;
};

}  // namespace dualswarm::coord::testing

#endif  // DUALSWARM_TESTS_INTEGRATION_TARGET_FIXTURE_H_
