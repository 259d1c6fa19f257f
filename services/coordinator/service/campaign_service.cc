// CampaignService (proto/dualswarm/v1/campaign.proto): run templates fired on
// cron schedules (the scheduler that fires them is scheduler.h), named by id
// or name, paused and resumed, and the runs each fired with what changed in
// their findings, and the spec coverage its runs reached. Submitters manage
// campaigns like runs.
#include "services/coordinator/service/grpc_services.h"

#include <string>

#include "dualswarm/v1/campaign.grpc.pb.h"
#include "services/coordinator/coverage_report.h"
#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {
namespace {

class CampaignService final : public ServiceWithState<v1::CampaignService::Service> {
 public:
  using ServiceWithState::ServiceWithState;

  grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateCampaignRequest* req, v1::Campaign* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    const v1::Campaign& p = req->campaign();
    if (p.cron().size() > 1000) return Invalid("cron exceeds 1000 bytes");
    if (p.template_().budget().explore_depth() <= 0 || p.template_().target_id() != 0)  // explore runs: see Submit
      if (auto st = CheckId("campaign.template.target_id", p.template_().target_id()); !st.ok()) return st;
    return ReplyWith(state_->store()->CreateCampaign(CampaignFromProto(p), NowMicros()), CampaignToProto, resp);
  }

  grpc::Status List(grpc::ServerContext* ctx, const v1::ListCampaignsRequest* req,
                    v1::ListCampaignsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
    return ReplyWithPage(state_->store()->ListCampaigns(PageOf(req->page_size(), req->page_token())), CampaignToProto,
                         resp->mutable_campaigns(), resp->mutable_next_page_token());
  }

  grpc::Status Get(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Campaign* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    return ReplyWithIdOrName(state_->store(), &Store::GetCampaign, &Store::GetCampaignByName, req->id(), req->name(),
                             CampaignToProto, resp);
  }

  grpc::Status Pause(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Campaign* resp) override {
    return SetPaused(ctx, req, true, resp);
  }

  grpc::Status Resume(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Campaign* resp) override {
    return SetPaused(ctx, req, false, resp);
  }

  grpc::Status Delete(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                      v1::DeleteCampaignResponse*) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    auto id = Resolve(req->id(), req->name());
    if (!id.ok()) return ToGrpc(id.status());
    return ToGrpc(state_->store()->DeleteCampaign(*id));
  }

  grpc::Status ListRuns(grpc::ServerContext* ctx, const v1::ListCampaignRunsRequest* req,
                        v1::ListCampaignRunsResponse* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
    auto id = Resolve(req->id(), req->name());
    if (!id.ok()) return ToGrpc(id.status());
    return ReplyWithPage(state_->store()->ListCampaignRuns(*id, PageOf(req->page_size(), req->page_token())),
                         CampaignRunToProto, resp->mutable_runs(), resp->mutable_next_page_token());
  }

  grpc::Status GetCoverage(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Coverage* resp) override {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    auto id = Resolve(req->id(), req->name());
    if (!id.ok()) return ToGrpc(id.status());
    auto row = state_->store()->CampaignCoverage(*id);
    if (!row.ok()) return ToGrpc(row.status());
    if (row->spec_hash.empty()) return grpc::Status::OK;  // it fired no run yet
    auto spec = state_->CachedSpec(row->spec_hash);
    if (!spec.ok()) return ToGrpc(spec.status());
    auto report = CoverageReport(**spec, *row);
    if (!report.ok()) return ToGrpc(report.status());
    *resp = std::move(*report);
    return grpc::Status::OK;
  }

 private:
  // The id of the campaign named by id or name.
  absl::StatusOr<int64_t> Resolve(int64_t id, const std::string& name) {
    if (auto st = CheckIdOrName(id, name); !st.ok()) return st;
    if (id != 0) return id;
    auto row = state_->store()->GetCampaignByName(name);
    if (!row.ok()) return row.status();
    return row->id;
  }

  grpc::Status SetPaused(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, bool paused, v1::Campaign* resp) {
    if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
    auto id = Resolve(req->id(), req->name());
    if (!id.ok()) return ToGrpc(id.status());
    return ReplyWith(state_->store()->SetCampaignPaused(*id, paused, NowMicros()), CampaignToProto, resp);
  }
};

}  // namespace

std::unique_ptr<grpc::Service> MakeCampaignService(ServiceState* state) {
  return std::make_unique<CampaignService>(state);
}

}  // namespace dualswarm::coord
