// Bad input through the real dualswarm-coordinator binary (embedded
// PostgreSQL in a temporary directory, auth on):
//   * the auth matrix: every RPC of every served service, called with no
//     token, a bogus or malformed one, and each role's token, gets exactly
//     UNAUTHENTICATED / PERMISSION_DENIED / something else (table-driven: a
//     new RPC is one row, and a service method without a row fails the test);
//   * validation: unknown ids are NOT_FOUND, malformed requests
//     INVALID_ARGUMENT with the reason, for each service;
//   * message limits: a request over --max-message-bytes is refused with
//     RESOURCE_EXHAUSTED and the server keeps serving; a spec over 1 MiB is
//     INVALID_ARGUMENT.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "dualswarm/v1/campaign.grpc.pb.h"
#include "dualswarm/v1/finding.grpc.pb.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "dualswarm/v1/spec.grpc.pb.h"
#include "dualswarm/v1/target.grpc.pb.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "gtest/gtest.h"
#include "proto/names/wire_names.h"
#include "tests/common/processes.h"

namespace {

namespace v1 = ::dualswarm::v1;
using dualswarm::testing::CoordinatorProcess;
using dualswarm::testing::Slurp;
using grpc::StatusCode;

std::string CodeName(StatusCode c) {
  return dualswarm::wire::StatusCodeName(c, absl::StrCat("code ", static_cast<int>(c)));
}

std::string Describe(const grpc::Status& st) {
  return absl::StrCat(CodeName(st.error_code()), ": ", st.error_message());
}

class CoordinatorBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override { StartCoordinator({}); }

  void StartCoordinator(std::vector<std::string> extra) {
    if (tmp_.empty()) tmp_ = dualswarm::testing::MakeTempDir("ds-auth");  // a restart reuses it
    ASSERT_FALSE(tmp_.empty());
    extra.insert(extra.end(), {"--lease-ms", "5000"});
    coordinator_ =
        std::make_unique<CoordinatorProcess>(CoordinatorProcess::Options{DUALSWARM_COORDINATOR, tmp_, "", extra, 0});
    ASSERT_EQ(coordinator_->Start(), "");
    auto channel = coordinator_->channel();
    specs_ = v1::SpecService::NewStub(channel);
    targets_ = v1::TargetService::NewStub(channel);
    runs_ = v1::RunService::NewStub(channel);
    findings_ = v1::FindingService::NewStub(channel);
    workers_ = v1::WorkerService::NewStub(channel);
    campaigns_ = v1::CampaignService::NewStub(channel);
    admin_ = coordinator_->Token("admin");
    submitter_ = coordinator_->Token("submitter");
    worker_ = coordinator_->Token("worker");
    ASSERT_FALSE(admin_.empty() || submitter_.empty() || worker_.empty());
  }

  void TearDown() override {
    coordinator_.reset();
    std::error_code ec;
    if (!tmp_.empty()) std::filesystem::remove_all(tmp_, ec);
  }

  std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) { return dualswarm::testing::AuthContext(token); }

  // A stored spec, a target and a registered worker for the tests to point at.
  void MakeFixtures() {
    v1::CreateSpecRequest sreq;
    sreq.set_file_name("kv.dspec");
    sreq.set_source(Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec"));
    v1::CreateSpecResponse sresp;
    grpc::Status st = specs_->Create(Ctx(submitter_).get(), sreq, &sresp);
    ASSERT_TRUE(st.ok()) << Describe(st);
    spec_hash_ = sresp.spec().hash();
    v1::CreateTargetRequest treq;
    treq.mutable_target()->set_name("kv");
    treq.mutable_target()->set_adapter("jsonl");
    treq.mutable_target()->set_address("127.0.0.1:9");
    v1::Target target;
    st = targets_->Create(Ctx(admin_).get(), treq, &target);
    ASSERT_TRUE(st.ok()) << Describe(st);
    target_id_ = target.id();
    v1::RegisterWorkerRequest rreq;
    rreq.set_name("w");
    rreq.set_slots(4);
    v1::RegisterWorkerResponse reg;
    st = workers_->Register(Ctx(worker_).get(), rreq, &reg);
    ASSERT_TRUE(st.ok()) << Describe(st);
    worker_id_ = reg.worker_id();
  }

  std::string tmp_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<v1::SpecService::Stub> specs_;
  std::unique_ptr<v1::TargetService::Stub> targets_;
  std::unique_ptr<v1::RunService::Stub> runs_;
  std::unique_ptr<v1::FindingService::Stub> findings_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
  std::unique_ptr<v1::CampaignService::Stub> campaigns_;
  std::string admin_, submitter_, worker_;
  std::string spec_hash_, worker_id_;
  int64_t target_id_ = 0;
};

// One RPC called with a prepared context (its metadata says who calls).
using Call = std::function<grpc::Status(grpc::ClientContext*)>;

struct Rpc {
  std::string name;             // "Service.Method", as in the proto
  std::set<std::string> roles;  // roles besides admin that may call it
  Call call;                    // an empty (mostly invalid) request
};

// A caller: how its context is dressed.
struct Principal {
  std::string name;
  std::string role;  // "" for callers that are not authenticated
  std::function<void(grpc::ClientContext*)> dress;
};

TEST_F(CoordinatorBadInputTest, AuthMatrixCoversEveryRpc) {
  // Empty requests: they would mostly be INVALID_ARGUMENT for an allowed
  // caller, so a 401/403 proves auth is checked before the request is looked at.
  auto stream = [](auto reader) {
    v1::RunEvent ev;
    while (reader->Read(&ev)) {
    }
    return reader->Finish();
  };
  std::vector<Rpc> rpcs = {
      {"SpecService.Create",
       {"submitter"},
       [&](auto* c) {
         v1::CreateSpecResponse r;
         return specs_->Create(c, {}, &r);
       }},
      {"SpecService.Get",
       {"submitter"},
       [&](auto* c) {
         v1::Spec r;
         return specs_->Get(c, {}, &r);
       }},
      {"SpecService.List",
       {"submitter"},
       [&](auto* c) {
         v1::ListSpecsResponse r;
         return specs_->List(c, {}, &r);
       }},
      {"SpecService.Validate",
       {"submitter"},
       [&](auto* c) {
         v1::ValidateSpecResponse r;
         return specs_->Validate(c, {}, &r);
       }},
      {"TargetService.Create",
       {},
       [&](auto* c) {
         v1::Target r;
         return targets_->Create(c, {}, &r);
       }},
      {"TargetService.Get",
       {"submitter"},
       [&](auto* c) {
         v1::Target r;
         return targets_->Get(c, {}, &r);
       }},
      {"TargetService.List",
       {"submitter"},
       [&](auto* c) {
         v1::ListTargetsResponse r;
         return targets_->List(c, {}, &r);
       }},
      {"RunService.Submit",
       {"submitter"},
       [&](auto* c) {
         v1::Run r;
         return runs_->Submit(c, {}, &r);
       }},
      {"RunService.Get",
       {"submitter"},
       [&](auto* c) {
         v1::Run r;
         return runs_->Get(c, {}, &r);
       }},
      {"RunService.List",
       {"submitter"},
       [&](auto* c) {
         v1::ListRunsResponse r;
         return runs_->List(c, {}, &r);
       }},
      {"RunService.Cancel",
       {"submitter"},
       [&](auto* c) {
         v1::Run r;
         return runs_->Cancel(c, {}, &r);
       }},
      {"RunService.Watch", {"submitter"}, [&](auto* c) { return stream(runs_->Watch(c, {})); }},
      {"RunService.ListJobs",
       {"submitter"},
       [&](auto* c) {
         v1::ListJobsResponse r;
         return runs_->ListJobs(c, {}, &r);
       }},
      {"RunService.GetCoverage",
       {"submitter"},
       [&](auto* c) {
         v1::Coverage r;
         return runs_->GetCoverage(c, {}, &r);
       }},
      {"FindingService.List",
       {"submitter"},
       [&](auto* c) {
         v1::ListFindingsResponse r;
         return findings_->List(c, {}, &r);
       }},
      {"FindingService.Get",
       {"submitter"},
       [&](auto* c) {
         v1::Finding r;
         return findings_->Get(c, {}, &r);
       }},
      {"CampaignService.Create",
       {"submitter"},
       [&](auto* c) {
         v1::Campaign r;
         return campaigns_->Create(c, {}, &r);
       }},
      {"CampaignService.List",
       {"submitter"},
       [&](auto* c) {
         v1::ListCampaignsResponse r;
         return campaigns_->List(c, {}, &r);
       }},
      {"CampaignService.Get",
       {"submitter"},
       [&](auto* c) {
         v1::Campaign r;
         return campaigns_->Get(c, {}, &r);
       }},
      {"CampaignService.Pause",
       {"submitter"},
       [&](auto* c) {
         v1::Campaign r;
         return campaigns_->Pause(c, {}, &r);
       }},
      {"CampaignService.Resume",
       {"submitter"},
       [&](auto* c) {
         v1::Campaign r;
         return campaigns_->Resume(c, {}, &r);
       }},
      {"CampaignService.Delete",
       {"submitter"},
       [&](auto* c) {
         v1::DeleteCampaignResponse r;
         return campaigns_->Delete(c, {}, &r);
       }},
      {"CampaignService.ListRuns",
       {"submitter"},
       [&](auto* c) {
         v1::ListCampaignRunsResponse r;
         return campaigns_->ListRuns(c, {}, &r);
       }},
      {"CampaignService.GetCoverage",
       {"submitter"},
       [&](auto* c) {
         v1::Coverage r;
         return campaigns_->GetCoverage(c, {}, &r);
       }},
      {"WorkerService.Register",
       {"worker"},
       [&](auto* c) {
         v1::RegisterWorkerResponse r;
         return workers_->Register(c, {}, &r);
       }},
      {"WorkerService.LeaseJobs",
       {"worker"},
       [&](auto* c) {
         v1::LeaseJobsResponse r;
         return workers_->LeaseJobs(c, {}, &r);
       }},
      {"WorkerService.Heartbeat",
       {"worker"},
       [&](auto* c) {
         v1::HeartbeatResponse r;
         return workers_->Heartbeat(c, {}, &r);
       }},
      {"WorkerService.CompleteJob",
       {"worker"},
       [&](auto* c) {
         v1::CompleteJobResponse r;
         return workers_->CompleteJob(c, {}, &r);
       }},
  };

  // Every method of every served service has a row.
  std::set<std::string> rows;
  for (const Rpc& r : rpcs) rows.insert(r.name);
  for (const char* service :
       {"SpecService", "TargetService", "RunService", "FindingService", "CampaignService", "WorkerService"}) {
    const auto* desc =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(absl::StrCat("dualswarm.v1.", service));
    ASSERT_NE(desc, nullptr) << service;
    for (int i = 0; i < desc->method_count(); ++i) {
      std::string name = absl::StrCat(service, ".", desc->method(i)->name());
      EXPECT_EQ(rows.count(name), 1u) << name << " has no row in the auth matrix";
    }
  }

  auto bearer = [](std::string value) {
    return [value](grpc::ClientContext* c) { c->AddMetadata("authorization", value); };
  };
  std::vector<Principal> principals = {
      {"no token", "", [](grpc::ClientContext*) {}},
      {"bogus token", "", bearer("Bearer dst_" + std::string(64, '0'))},
      {"empty bearer", "", bearer("Bearer ")},
      {"basic auth", "", bearer("Basic YWRtaW46YWRtaW4=")},
      {"bare token", "", bearer(admin_)},  // the right token without "Bearer "
      {"oversized token", "", bearer("Bearer " + std::string(4096, 'x'))},
      {"admin", "admin", bearer("Bearer " + admin_)},
      {"submitter", "submitter", bearer("Bearer " + submitter_)},
      {"worker", "worker", bearer("bearer " + worker_)},  // the scheme is case-insensitive
  };
  int calls = 0;
  for (const Rpc& rpc : rpcs) {
    for (const Principal& who : principals) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      who.dress(&ctx);
      grpc::Status st = rpc.call(&ctx);
      ++calls;
      SCOPED_TRACE(absl::StrCat(rpc.name, " as ", who.name, ": ", Describe(st)));
      if (who.role.empty()) {
        EXPECT_EQ(st.error_code(), StatusCode::UNAUTHENTICATED);
      } else if (who.role != "admin" && rpc.roles.count(who.role) == 0) {
        EXPECT_EQ(st.error_code(), StatusCode::PERMISSION_DENIED);
        EXPECT_TRUE(absl::StrContains(st.error_message(), who.role));
      } else {
        // Allowed: the request itself is judged (empty ones are mostly invalid).
        EXPECT_TRUE(st.error_code() == StatusCode::OK || st.error_code() == StatusCode::INVALID_ARGUMENT ||
                    st.error_code() == StatusCode::NOT_FOUND);
      }
    }
  }
  EXPECT_EQ(calls, static_cast<int>(rpcs.size() * principals.size()));
}

// One malformed or unknown-id request and what it must get.
struct Case {
  std::string name;
  StatusCode code;
  std::string reason;  // a substring of the message ("" for none checked)
  Call call;           // called as admin
};

TEST_F(CoordinatorBadInputTest, ValidationPerService) {
  MakeFixtures();
  ASSERT_FALSE(HasFatalFailure());
  // A run with a leased job, for the completion cases.
  v1::SubmitRunRequest good_run;
  good_run.mutable_template_()->set_spec_hash(spec_hash_);
  good_run.mutable_template_()->set_target_id(target_id_);
  good_run.mutable_template_()->set_jobs(2);
  v1::Run run;
  ASSERT_TRUE(runs_->Submit(Ctx(submitter_).get(), good_run, &run).ok());
  v1::LeaseJobsRequest lease;
  lease.set_worker_id(worker_id_);
  lease.set_max_jobs(1);
  v1::LeaseJobsResponse leased;
  ASSERT_TRUE(workers_->LeaseJobs(Ctx(worker_).get(), lease, &leased).ok());
  ASSERT_EQ(leased.jobs_size(), 1);
  const v1::LeasedJob job = leased.jobs(0);

  const std::string kv = Slurp(std::string(DUALSWARM_SOURCE_DIR) + "/specs/kv.dspec");
  auto create_spec = [&](std::string file, std::string source) {
    return [=, this](grpc::ClientContext* c) {
      v1::CreateSpecRequest q;
      q.set_file_name(file);
      q.set_source(source);
      v1::CreateSpecResponse r;
      return specs_->Create(c, q, &r);
    };
  };
  auto get_spec = [&](std::string hash, std::string name) {
    return [=, this](grpc::ClientContext* c) {
      v1::GetSpecRequest q;
      q.set_hash(hash);
      q.set_name(name);
      v1::Spec r;
      return specs_->Get(c, q, &r);
    };
  };
  auto list_specs = [&](int size, std::string token) {
    return [=, this](grpc::ClientContext* c) {
      v1::ListSpecsRequest q;
      q.set_page_size(size);
      q.set_page_token(token);
      v1::ListSpecsResponse r;
      return specs_->List(c, q, &r);
    };
  };
  auto create_target = [&](std::function<void(v1::Target*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::CreateTargetRequest q;
      v1::Target* t = q.mutable_target();
      t->set_name("t2");
      t->set_adapter("http");
      t->set_address("127.0.0.1:8080");
      edit(t);
      v1::Target r;
      return targets_->Create(c, q, &r);
    };
  };
  auto get_target = [&](int64_t id, std::string name) {
    return [=, this](grpc::ClientContext* c) {
      v1::GetTargetRequest q;
      q.set_id(id);
      q.set_name(name);
      v1::Target r;
      return targets_->Get(c, q, &r);
    };
  };
  auto list_targets = [&](int size, std::string token) {
    return [=, this](grpc::ClientContext* c) {
      v1::ListTargetsRequest q;
      q.set_page_size(size);
      q.set_page_token(token);
      v1::ListTargetsResponse r;
      return targets_->List(c, q, &r);
    };
  };
  auto submit = [&](std::function<void(v1::RunTemplate*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::SubmitRunRequest q = good_run;
      edit(q.mutable_template_());
      v1::Run r;
      return runs_->Submit(c, q, &r);
    };
  };
  auto create_campaign = [&](std::function<void(v1::Campaign*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::CreateCampaignRequest q;
      v1::Campaign* k = q.mutable_campaign();
      k->set_name("nightly");
      k->set_cron("0 3 * * *");
      *k->mutable_template_() = good_run.template_();
      edit(k);
      v1::Campaign r;
      return campaigns_->Create(c, q, &r);
    };
  };
  // Get, Pause, Resume, Delete of a campaign by id and name.
  auto campaign_op = [&](std::string op, int64_t id, std::string name) {
    return [=, this](grpc::ClientContext* c) {
      v1::CampaignIdRequest q;
      q.set_id(id);
      q.set_name(name);
      v1::Campaign r;
      v1::DeleteCampaignResponse d;
      if (op == "get") return campaigns_->Get(c, q, &r);
      if (op == "pause") return campaigns_->Pause(c, q, &r);
      if (op == "resume") return campaigns_->Resume(c, q, &r);
      return campaigns_->Delete(c, q, &d);
    };
  };
  auto campaign_runs = [&](std::function<void(v1::ListCampaignRunsRequest*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::ListCampaignRunsRequest q;
      q.set_id(987654);
      edit(&q);
      v1::ListCampaignRunsResponse r;
      return campaigns_->ListRuns(c, q, &r);
    };
  };
  auto list_campaigns = [&](int size) {
    return [=, this](grpc::ClientContext* c) {
      v1::ListCampaignsRequest q;
      q.set_page_size(size);
      v1::ListCampaignsResponse r;
      return campaigns_->List(c, q, &r);
    };
  };
  auto get_run = [&](int64_t id) {
    return [=, this](grpc::ClientContext* c) {
      v1::GetRunRequest q;
      q.set_id(id);
      v1::Run r;
      return runs_->Get(c, q, &r);
    };
  };
  auto list_runs = [&](std::function<void(v1::ListRunsRequest*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::ListRunsRequest q;
      edit(&q);
      v1::ListRunsResponse r;
      return runs_->List(c, q, &r);
    };
  };
  auto list_jobs = [&](std::function<void(v1::ListJobsRequest*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::ListJobsRequest q;
      q.set_run_id(987654);
      edit(&q);
      v1::ListJobsResponse r;
      return runs_->ListJobs(c, q, &r);
    };
  };
  auto cancel_run = [&](int64_t id) {
    return [=, this](grpc::ClientContext* c) {
      v1::CancelRunRequest q;
      q.set_id(id);
      v1::Run r;
      return runs_->Cancel(c, q, &r);
    };
  };
  auto watch_run = [&](int64_t id) {
    return [=, this](grpc::ClientContext* c) {
      v1::WatchRunRequest q;
      q.set_id(id);
      auto reader = runs_->Watch(c, q);
      v1::RunEvent ev;
      while (reader->Read(&ev)) {
      }
      return reader->Finish();
    };
  };
  auto list_findings = [&](std::function<void(v1::ListFindingsRequest*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::ListFindingsRequest q;
      edit(&q);
      v1::ListFindingsResponse r;
      return findings_->List(c, q, &r);
    };
  };
  auto get_finding = [&](int64_t id, int max_cx) {
    return [=, this](grpc::ClientContext* c) {
      v1::GetFindingRequest q;
      q.set_id(id);
      q.set_max_counterexamples(max_cx);
      v1::Finding r;
      return findings_->Get(c, q, &r);
    };
  };
  auto register_worker = [&](std::function<void(v1::RegisterWorkerRequest*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::RegisterWorkerRequest q;
      q.set_name("w2");
      q.set_slots(1);
      edit(&q);
      v1::RegisterWorkerResponse r;
      return workers_->Register(c, q, &r);
    };
  };
  auto lease_jobs = [&](std::string worker, int max_jobs, int wait_ms) {
    return [=, this](grpc::ClientContext* c) {
      v1::LeaseJobsRequest q;
      q.set_worker_id(worker);
      q.set_max_jobs(max_jobs);
      q.set_wait_ms(wait_ms);
      v1::LeaseJobsResponse r;
      return workers_->LeaseJobs(c, q, &r);
    };
  };
  auto heartbeat = [&](std::string worker, std::string token, int entries) {
    return [=, this](grpc::ClientContext* c) {
      v1::HeartbeatRequest q;
      q.set_worker_id(worker);
      for (int i = 0; i < entries; ++i) {
        auto* p = q.add_progress();
        p->set_job_id(job.job_id());
        p->set_lease_token(token);
      }
      v1::HeartbeatResponse r;
      return workers_->Heartbeat(c, q, &r);
    };
  };
  auto complete = [&](std::function<void(v1::CompleteJobRequest*)> edit) {
    return [=, this](grpc::ClientContext* c) {
      v1::CompleteJobRequest q;
      q.set_worker_id(worker_id_);
      q.set_job_id(job.job_id());
      q.set_lease_token(job.lease_token());
      q.set_outcome(v1::JOB_OUTCOME_PASSED);
      edit(&q);
      v1::CompleteJobResponse r;
      return workers_->CompleteJob(c, q, &r);
    };
  };
  const StatusCode kInvalid = StatusCode::INVALID_ARGUMENT;
  const StatusCode kNotFound = StatusCode::NOT_FOUND;
  std::vector<Case> cases = {
      // --- SpecService
      {"spec: empty source", kInvalid, "the spec does not load", create_spec("e.dspec", "")},
      {"spec: not a spec", kInvalid, "bad.dspec:1:", create_spec("bad.dspec", "hello world\n")},
      {"spec: source over 1 MiB", kInvalid, "exceeds 1 MiB",
       create_spec("big.dspec", kv + "\n#" + std::string(1 << 20, 'x') + "\n")},
      {"spec: file name over 255 bytes", kInvalid, "file_name", create_spec(std::string(300, 'f'), kv)},
      {"spec: validate over 1 MiB", kInvalid, "exceeds 1 MiB",
       [&](grpc::ClientContext* c) {
         v1::ValidateSpecRequest q;
         q.set_source(std::string((1 << 20) + 1, ' '));
         v1::ValidateSpecResponse r;
         return specs_->Validate(c, q, &r);
       }},
      {"spec: get with neither hash nor name", kInvalid, "exactly one", get_spec("", "")},
      {"spec: get with hash and name", kInvalid, "exactly one", get_spec(spec_hash_, "kv")},
      {"spec: unknown hash", kNotFound, "no spec", get_spec(std::string(64, 'a'), "")},
      {"spec: unknown name", kNotFound, "no spec", get_spec("", "no-such-spec")},
      {"spec: page_size 501", kInvalid, "page_size", list_specs(501, "")},
      {"spec: page_size -1", kInvalid, "page_size", list_specs(-1, "")},
      {"spec: page token not a number", kInvalid, "bad page token", list_specs(10, "abc")},
      {"spec: negative page token", kInvalid, "bad page token", list_specs(10, "-5")},
      {"spec: page token overflows", kInvalid, "bad page token", list_specs(10, "99999999999999999999999")},
      // --- TargetService
      {"target: bad name", kInvalid, "bad target name",
       create_target([](v1::Target* t) { t->set_name("no spaces allowed"); })},
      {"target: empty name", kInvalid, "bad target name", create_target([](v1::Target* t) { t->set_name(""); })},
      {"target: bad adapter", kInvalid, "unknown adapter",
       create_target([](v1::Target* t) { t->set_adapter("smtp"); })},
      {"target: address and launch", kInvalid, "exactly one of address and launch",
       create_target([](v1::Target* t) { t->set_launch("/bin/sut --port {port}"); })},
      {"target: neither address nor launch", kInvalid, "exactly one of address and launch",
       create_target([](v1::Target* t) { t->clear_address(); })},
      {"target: address without port", kInvalid, "bad address",
       create_target([](v1::Target* t) { t->set_address("localhost"); })},
      {"target: port 70000", kInvalid, "bad address",
       create_target([](v1::Target* t) { t->set_address("localhost:70000"); })},
      {"target: launch without {port}", kInvalid, "{port}", create_target([](v1::Target* t) {
         t->clear_address();
         t->set_launch("/bin/sut");
       })},
      {"target: bad readiness probe", kInvalid, "readiness probe",
       create_target([](v1::Target* t) { t->mutable_readiness()->set_probe("udp"); })},
      {"target: readiness timeout too long", kInvalid, "readiness timeout",
       create_target([](v1::Target* t) { t->mutable_readiness()->set_timeout_ms(600001); })},
      {"target: restart-per-job without launch", kInvalid, "restart-per-job",
       create_target([](v1::Target* t) { t->set_reset_policy(v1::RESET_POLICY_RESTART_PER_JOB); })},
      {"target: bad label", kInvalid, "bad label", create_target([](v1::Target* t) { t->add_labels("has space"); })},
      {"target: name taken", StatusCode::ALREADY_EXISTS, "exists",
       create_target([](v1::Target* t) { t->set_name("kv"); })},
      {"target: get with neither id nor name", kInvalid, "exactly one", get_target(0, "")},
      {"target: get with id and name", kInvalid, "exactly one", get_target(target_id_, "kv")},
      {"target: negative id", kInvalid, "positive", get_target(-3, "")},
      {"target: unknown id", kNotFound, "no target", get_target(987654, "")},
      {"target: unknown name", kNotFound, "no target", get_target(0, "nope")},
      {"target: page_size 501", kInvalid, "page_size", list_targets(501, "")},
      {"target: bad page token", kInvalid, "bad page token", list_targets(0, "x1")},
      // --- RunService
      {"run: no spec", kInvalid, "spec_hash", submit([](auto* t) { t->clear_spec_hash(); })},
      {"run: target 0", kInvalid, "target_id", submit([](auto* t) { t->set_target_id(0); })},
      {"run: negative target", kInvalid, "target_id", submit([](auto* t) { t->set_target_id(-1); })},
      {"run: jobs 0", kInvalid, "jobs must be between 1 and 100000", submit([](auto* t) { t->set_jobs(0); })},
      {"run: jobs 100001", kInvalid, "jobs must be between 1 and 100000", submit([](auto* t) { t->set_jobs(100001); })},
      {"run: negative jobs", kInvalid, "jobs must be", submit([](auto* t) { t->set_jobs(-5); })},
      {"run: 999 connections", kInvalid, "budget.connections",
       submit([](auto* t) { t->mutable_budget()->set_connections(999); })},
      {"run: bad network", kInvalid, "budget.network",
       submit([](auto* t) { t->mutable_budget()->set_network("udp"); })},
      {"run: negative time budget", kInvalid, "time_budget_ms",
       submit([](auto* t) { t->mutable_budget()->set_time_budget_ms(-1); })},
      {"run: bad gen name", kInvalid, "bad gen name", submit([](auto* t) { t->set_gen("a b"); })},
      {"run: unknown spec", kNotFound, "no spec", submit([](auto* t) { t->set_spec_hash("feed"); })},
      {"run: unknown target", kNotFound, "no target", submit([](auto* t) { t->set_target_id(987654); })},
      {"run: get id 0", kInvalid, "positive", get_run(0)},
      {"run: get negative id", kInvalid, "positive", get_run(-7)},
      {"run: get unknown id", kNotFound, "no run", get_run(987654)},
      {"run: page_size 501", kInvalid, "page_size", list_runs([](auto* q) { q->set_page_size(501); })},
      {"run: bad page token", kInvalid, "bad page token", list_runs([](auto* q) { q->set_page_token("next"); })},
      {"run: negative target filter", kInvalid, "target_id", list_runs([](auto* q) { q->set_target_id(-1); })},
      {"run: unknown state filter", kInvalid, "state",
       list_runs([](auto* q) { q->set_state(static_cast<v1::RunState>(42)); })},
      {"run: cancel negative id", kInvalid, "positive", cancel_run(-1)},
      {"run: cancel unknown id", kNotFound, "no run", cancel_run(987654)},
      {"run: watch negative id", kInvalid, "positive", watch_run(-1)},
      {"run: watch unknown id", kNotFound, "no run", watch_run(987654)},
      {"run: jobs of run 0", kInvalid, "run_id", list_jobs([](auto* q) { q->set_run_id(0); })},
      {"run: jobs of an unknown run", kNotFound, "no run", list_jobs([](auto*) {})},
      {"run: jobs page_size 501", kInvalid, "page_size", list_jobs([](auto* q) { q->set_page_size(501); })},
      {"run: jobs bad page token", kInvalid, "bad page token", list_jobs([](auto* q) { q->set_page_token("-1"); })},
      {"run: jobs unknown state", kInvalid, "job state",
       list_jobs([](auto* q) { q->set_state(static_cast<v1::JobState>(42)); })},
      // --- CampaignService
      {"campaign: cron hour 24", kInvalid, "hour \"24\": 24 is out of range 0-23",
       create_campaign([](auto* k) { k->set_cron("0 24 * * *"); })},
      {"campaign: cron 4 fields", kInvalid, "want 5 fields", create_campaign([](auto* k) { k->set_cron("0 3 * *"); })},
      {"campaign: cron empty", kInvalid, "got 0", create_campaign([](auto* k) { k->clear_cron(); })},
      {"campaign: cron backwards range", kInvalid, "day-of-week \"5-1\": range 5-1 is backwards",
       create_campaign([](auto* k) { k->set_cron("0 3 * * 5-1"); })},
      {"campaign: cron never fires", kInvalid, "never occurs",
       create_campaign([](auto* k) { k->set_cron("0 0 30 2 *"); })},
      {"campaign: cron step 0", kInvalid, "step 0", create_campaign([](auto* k) { k->set_cron("*/0 * * * *"); })},
      {"campaign: bad name", kInvalid, "campaign name", create_campaign([](auto* k) { k->set_name("no spaces"); })},
      {"campaign: spec hash and name", kInvalid, "exactly one of spec_hash",
       create_campaign([](auto* k) { k->set_spec_name("kv"); })},
      {"campaign: no spec", kInvalid, "exactly one of spec_hash",
       create_campaign([](auto* k) { k->mutable_template_()->clear_spec_hash(); })},
      {"campaign: no target", kInvalid, "target_id",
       create_campaign([](auto* k) { k->mutable_template_()->clear_target_id(); })},
      {"campaign: 0 jobs", kInvalid, "jobs must be between",
       create_campaign([](auto* k) { k->mutable_template_()->set_jobs(0); })},
      {"campaign: bad budget", kInvalid, "budget.connections",
       create_campaign([](auto* k) { k->mutable_template_()->mutable_budget()->set_connections(999); })},
      {"campaign: unknown spec", kNotFound, "no spec version",
       create_campaign([](auto* k) { k->mutable_template_()->set_spec_hash(std::string(64, 'f')); })},
      {"campaign: unknown spec name", kNotFound, "no spec named", create_campaign([](auto* k) {
         k->mutable_template_()->clear_spec_hash();
         k->set_spec_name("nope");
       })},
      {"campaign: unknown target", kNotFound, "no target",
       create_campaign([](auto* k) { k->mutable_template_()->set_target_id(987654); })},
      {"campaign: get neither id nor name", kInvalid, "exactly one of id and name", campaign_op("get", 0, "")},
      {"campaign: get both", kInvalid, "exactly one of id and name", campaign_op("get", 1, "x")},
      {"campaign: get negative id", kInvalid, "positive", campaign_op("get", -1, "")},
      {"campaign: get unknown id", kNotFound, "no campaign", campaign_op("get", 987654, "")},
      {"campaign: get unknown name", kNotFound, "no campaign named", campaign_op("get", 0, "nope")},
      {"campaign: pause unknown", kNotFound, "no campaign", campaign_op("pause", 987654, "")},
      {"campaign: resume unknown", kNotFound, "no campaign named", campaign_op("resume", 0, "nope")},
      {"campaign: delete unknown", kNotFound, "no campaign", campaign_op("delete", 987654, "")},
      {"campaign: delete neither", kInvalid, "exactly one", campaign_op("delete", 0, "")},
      {"campaign: runs of unknown", kNotFound, "no campaign", campaign_runs([](auto*) {})},
      {"campaign: runs page_size 501", kInvalid, "page_size", campaign_runs([](auto* q) { q->set_page_size(501); })},
      {"campaign: runs bad page token", kInvalid, "bad page token",
       campaign_runs([](auto* q) { q->set_page_token("x"); })},
      {"campaign: list page_size 501", kInvalid, "page_size", list_campaigns(501)},
      // --- FindingService
      {"finding: page_size 501", kInvalid, "page_size", list_findings([](auto* q) { q->set_page_size(501); })},
      {"finding: bad page token", kInvalid, "bad page token", list_findings([](auto* q) { q->set_page_token("?"); })},
      {"finding: negative run", kInvalid, "negative", list_findings([](auto* q) { q->set_run_id(-1); })},
      {"finding: negative target", kInvalid, "negative", list_findings([](auto* q) { q->set_target_id(-1); })},
      {"finding: get negative id", kInvalid, "positive", get_finding(-1, 0)},
      {"finding: get unknown id", kNotFound, "no finding", get_finding(987654, 0)},
      {"finding: 101 counterexamples", kInvalid, "max_counterexamples", get_finding(1, 101)},
      // --- WorkerService
      {"worker: no name", kInvalid, "worker name", register_worker([](auto* q) { q->set_name(""); })},
      {"worker: 0 slots", kInvalid, "slots", register_worker([](auto* q) { q->set_slots(0); })},
      {"worker: 257 slots", kInvalid, "slots", register_worker([](auto* q) { q->set_slots(257); })},
      {"worker: bad adapter", kInvalid, "bad adapter", register_worker([](auto* q) { q->add_adapters("a,b"); })},
      {"worker: bad label", kInvalid, "bad label", register_worker([](auto* q) { q->add_labels(""); })},
      {"lease: max_jobs 0", kInvalid, "max_jobs must be between 1 and 256", lease_jobs(worker_id_, 0, 0)},
      {"lease: max_jobs 257", kInvalid, "max_jobs must be between 1 and 256", lease_jobs(worker_id_, 257, 0)},
      {"lease: wait_ms 60001", kInvalid, "wait_ms must be between 0 and 60000", lease_jobs(worker_id_, 1, 60001)},
      {"lease: negative wait_ms", kInvalid, "wait_ms", lease_jobs(worker_id_, 1, -1)},
      {"lease: unknown worker", kNotFound, "register first", lease_jobs("no-such-worker", 1, 0)},
      {"lease: no worker id", kNotFound, "register first", lease_jobs("", 1, 0)},
      {"heartbeat: unknown worker", kNotFound, "register first", heartbeat("nope", "t", 1)},
      {"heartbeat: lease token too long", kInvalid, "lease token", heartbeat(worker_id_, std::string(65, 't'), 1)},
      {"heartbeat: 1025 jobs", kInvalid, "too many jobs", heartbeat(worker_id_, "t", 1025)},
      {"complete: no outcome", kInvalid, "outcome is required", complete([](auto* q) { q->clear_outcome(); })},
      {"complete: unknown outcome", kInvalid, "outcome",
       complete([](auto* q) { q->set_outcome(static_cast<v1::JobOutcome>(9)); })},
      {"complete: FAILED without counterexample", kInvalid, "counterexample",
       complete([](auto* q) { q->set_outcome(v1::JOB_OUTCOME_FAILED); })},
      {"complete: counterexample without kind", kInvalid, "counterexample.kind", complete([](auto* q) {
         q->set_outcome(v1::JOB_OUTCOME_FAILED);
         q->mutable_counterexample()->set_reason("x");
       })},
      {"complete: job id 0", kInvalid, "job_id", complete([](auto* q) { q->set_job_id(0); })},
      {"complete: negative job id", kInvalid, "job_id", complete([](auto* q) { q->set_job_id(-2); })},
      {"complete: no lease token", kInvalid, "lease token", complete([](auto* q) { q->clear_lease_token(); })},
      {"complete: unknown job", kNotFound, "no job", complete([](auto* q) { q->set_job_id(987654); })},
      {"complete: wrong lease token", StatusCode::FAILED_PRECONDITION, "never leased",
       complete([](auto* q) { q->set_lease_token("00000000-0000-0000-0000-000000000000"); })},
  };
  std::set<std::string> names;
  for (const Case& c : cases) {
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
    auto ctx = Ctx(admin_);
    grpc::Status st = c.call(ctx.get());
    EXPECT_EQ(CodeName(st.error_code()), CodeName(c.code)) << c.name << ": " << Describe(st);
    EXPECT_TRUE(absl::StrContains(st.error_message(), c.reason))
        << c.name << ": want \"" << c.reason << "\" in: " << st.error_message();
  }

  // Nothing of the above changed the data: one run, one target, the job
  // still leased and completable.
  v1::ListRunsResponse all;
  ASSERT_TRUE(runs_->List(Ctx(admin_).get(), {}, &all).ok());
  EXPECT_EQ(all.runs_size(), 1);
  v1::ListTargetsResponse targets;
  ASSERT_TRUE(targets_->List(Ctx(admin_).get(), {}, &targets).ok());
  EXPECT_EQ(targets.targets_size(), 1);
  v1::ListCampaignsResponse campaigns;
  ASSERT_TRUE(campaigns_->List(Ctx(admin_).get(), {}, &campaigns).ok());
  EXPECT_EQ(campaigns.campaigns_size(), 0);
  // The valid campaign the cases above were variations of is accepted.
  grpc::Status made = create_campaign([](auto*) {})(Ctx(submitter_).get());
  EXPECT_TRUE(made.ok()) << Describe(made);
  grpc::Status done = complete([](auto*) {})(Ctx(worker_).get());
  EXPECT_TRUE(done.ok()) << Describe(done);
}

TEST_F(CoordinatorBadInputTest, PagingWalksEveryItemOnce) {
  MakeFixtures();
  ASSERT_FALSE(HasFatalFailure());
  // Seven runs, listed three at a time: every run once, newest first.
  for (int i = 0; i < 7; ++i) {
    v1::SubmitRunRequest q;
    q.mutable_template_()->set_spec_hash(spec_hash_);
    q.mutable_template_()->set_target_id(target_id_);
    q.mutable_template_()->set_jobs(1);
    v1::Run r;
    ASSERT_TRUE(runs_->Submit(Ctx(submitter_).get(), q, &r).ok());
  }
  std::vector<int64_t> seen;
  std::string token;
  for (int page = 0; page < 10; ++page) {
    v1::ListRunsRequest q;
    q.set_page_size(3);
    q.set_page_token(token);
    v1::ListRunsResponse r;
    grpc::Status st = runs_->List(Ctx(submitter_).get(), q, &r);
    ASSERT_TRUE(st.ok()) << Describe(st);
    for (const auto& run : r.runs()) seen.push_back(run.id());
    token = r.next_page_token();
    if (token.empty()) break;
  }
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_TRUE(std::is_sorted(seen.rbegin(), seen.rend()));
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 7u);
  // A page token far past the end is an empty last page, not an error.
  v1::ListRunsRequest past;
  past.set_page_token("1");
  v1::ListRunsResponse empty;
  ASSERT_TRUE(runs_->List(Ctx(submitter_).get(), past, &empty).ok());
  EXPECT_EQ(empty.runs_size(), 0);
  EXPECT_EQ(empty.next_page_token(), "");
}

// A request of `bytes` bytes in the spec source field (Validate: nothing is stored).
grpc::Status ValidateOfSize(v1::SpecService::Stub* specs, const std::string& token, size_t bytes) {
  v1::ValidateSpecRequest q;
  q.set_source(std::string(bytes, ' '));
  v1::ValidateSpecResponse r;
  auto ctx = dualswarm::testing::AuthContext(token);
  return specs->Validate(ctx.get(), q, &r);
}

TEST_F(CoordinatorBadInputTest, OversizedRequestsAreRefusedAndTheServerKeepsServing) {
  // Default limit: 16 MiB per request.
  grpc::Status st = ValidateOfSize(specs_.get(), submitter_, (16u << 20) + 1024);
  EXPECT_EQ(st.error_code(), StatusCode::RESOURCE_EXHAUSTED) << Describe(st);
  for (int i = 0; i < 3; ++i) {  // repeatedly, and the server still answers
    st = ValidateOfSize(specs_.get(), submitter_, 20u << 20);
    EXPECT_EQ(st.error_code(), StatusCode::RESOURCE_EXHAUSTED) << Describe(st);
    st = ValidateOfSize(specs_.get(), submitter_, 1000);
    EXPECT_TRUE(st.ok()) << Describe(st);
  }
  // Under the transport limit, over the spec limit: the service says why.
  st = ValidateOfSize(specs_.get(), submitter_, 8u << 20);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << Describe(st);
  EXPECT_TRUE(absl::StrContains(st.error_message(), "exceeds 1 MiB")) << Describe(st);
  // Unauthenticated callers cannot make the server read more either.
  st = ValidateOfSize(specs_.get(), "", 20u << 20);
  EXPECT_EQ(st.error_code(), StatusCode::RESOURCE_EXHAUSTED) << Describe(st);
  EXPECT_GT(kill(coordinator_->pid(), 0), -1) << "the coordinator died";

  // --max-message-bytes lowers (or raises) the limit.
  coordinator_.reset();
  StartCoordinator({"--max-message-bytes", std::to_string(2 << 20)});
  ASSERT_FALSE(HasFatalFailure());
  st = ValidateOfSize(specs_.get(), submitter_, 3u << 20);
  EXPECT_EQ(st.error_code(), StatusCode::RESOURCE_EXHAUSTED) << Describe(st);
  st = ValidateOfSize(specs_.get(), submitter_, (1u << 20) + 10);
  EXPECT_EQ(st.error_code(), StatusCode::INVALID_ARGUMENT) << Describe(st);
  st = ValidateOfSize(specs_.get(), submitter_, 10);
  EXPECT_TRUE(st.ok()) << Describe(st);

  // An out-of-range limit is a usage error (exit 2) before anything starts.
  auto r = dualswarm::testing::RunCommand(
      {DUALSWARM_COORDINATOR, "--max-message-bytes", "100", "--data-dir", tmp_ + "/unused"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--max-message-bytes")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tmp_ + "/unused")) << "no database for a usage error";
}

}  // namespace
