// RunService (proto/dualswarm/v1/run.proto): runs submitted (a swarm of jobs
// from a template, named after its submitter), read, listed, cancelled and
// watched (a stream of the run as it changes, polled every watch_poll_ms,
// ending when the run is final), a run's jobs listed, and the spec coverage
// its jobs reached.
#include "services/coordinator/service/grpc_services.h"

#include <chrono>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "dualswarm/v1/run.grpc.pb.h"
#include "proto/names/wire_names.h"
#include "services/coordinator/coverage_report.h"
#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {
namespace {

class RunService final : public ServiceWithState<v1::RunService::Service> {
 public:
  using ServiceWithState::ServiceWithState;

  grpc::Status Submit(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req, v1::Run* resp) override {
    Caller caller;
    if (auto st = state_->auth().Admit(ctx, &caller); !st.ok()) return st;
    const v1::RunTemplate& p = req->template_();
    if (p.spec_hash().empty()) return Invalid("template.spec_hash is required");
    // An explore run (budget.explore_depth > 0) may leave its target 0: the
    // store gives it the built-in one.
    if (p.budget().explore_depth() <= 0 || p.target_id() != 0)
      if (auto st = CheckId("template.target_id", p.target_id()); !st.ok()) return st;
    auto run = state_->store()->SubmitRun(TemplateFromProto(p), caller.name);
    if (run.ok()) state_->Wake();
    return ReplyWith(run, RunToProto, resp);
  }

  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetRunRequest* req, v1::Run* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckId("id", req->id()); !st.ok()) return st;
    return ReplyWith(state_->store()->GetRun(req->id()), RunToProto, resp);
  }

  grpc::Status List(grpc::ServerContext* ctx, const v1::ListRunsRequest* req, v1::ListRunsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
    if (req->target_id() < 0) return Invalid("target_id must not be negative");
    RunFilter f;
    f.state = req->state();
    if (!wire::IsKnown(f.state) && f.state != v1::RUN_STATE_UNSPECIFIED)
      return Invalid(absl::StrCat("unknown run state ", static_cast<int>(req->state())));
    f.spec_hash = req->spec_hash();
    f.target_id = req->target_id();
    return ReplyWithPage(state_->store()->ListRuns(f, PageOf(req->page_size(), req->page_token())), RunToProto,
                         resp->mutable_runs(), resp->mutable_next_page_token());
  }

  grpc::Status Cancel(grpc::ServerContext* ctx, const v1::CancelRunRequest* req, v1::Run* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckId("id", req->id()); !st.ok()) return st;
    auto run = state_->store()->CancelRun(req->id());
    if (run.ok()) state_->lease_pool().DropRun(req->id());
    return ReplyWith(run, RunToProto, resp);
  }

  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                     grpc::ServerWriter<v1::RunEvent>* writer) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckId("id", req->id()); !st.ok()) return st;
    std::string last;
    while (!ctx->IsCancelled()) {
      auto run = state_->store()->GetRun(req->id());
      if (!run.ok()) {
        // A database outage is waited out; anything else ends the stream.
        if (!absl::IsUnavailable(run.status())) return ToGrpc(run.status());
      } else {
        v1::RunEvent ev;
        RunToProto(*run, ev.mutable_run());
        ev.set_final(run->state != v1::RUN_STATE_QUEUED && run->state != v1::RUN_STATE_RUNNING);
        std::string now = ev.SerializeAsString();
        if (now != last) {
          if (!writer->Write(ev)) return grpc::Status::OK;  // the client went away
          last = now;
        }
        if (ev.final()) return grpc::Status::OK;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(state_->options().watch_poll_ms));
    }
    return grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled");
  }

  grpc::Status ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req, v1::ListJobsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckId("run_id", req->run_id()); !st.ok()) return st;
    if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
    v1::JobState state = req->state();
    if (!wire::IsKnown(state) && state != v1::JOB_STATE_UNSPECIFIED)
      return Invalid(absl::StrCat("unknown job state ", static_cast<int>(req->state())));
    return ReplyWithPage(
        state_->store()->ListRunJobs(req->run_id(), state, PageOf(req->page_size(), req->page_token())), JobToProto,
        resp->mutable_jobs(), resp->mutable_next_page_token());
  }

  grpc::Status GetCoverage(grpc::ServerContext* ctx, const v1::GetRunCoverageRequest* req,
                           v1::Coverage* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckId("run_id", req->run_id()); !st.ok()) return st;
    auto row = state_->store()->RunCoverage(req->run_id());
    if (!row.ok()) return ToGrpc(row.status());
    auto spec = state_->CachedSpec(row->spec_hash);
    if (!spec.ok()) return ToGrpc(spec.status());
    auto report = CoverageReport(**spec, *row);
    if (!report.ok()) return ToGrpc(report.status());
    *resp = std::move(*report);
    return grpc::Status::OK;
  }
};

}  // namespace

std::unique_ptr<grpc::Service> MakeRunService(ServiceState* state) { return std::make_unique<RunService>(state); }

}  // namespace dualswarm::coord
