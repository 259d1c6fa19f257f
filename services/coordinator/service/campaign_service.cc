#include "services/coordinator/service/campaign_service.h"

#include "services/coordinator/proto_convert.h"
#include "services/coordinator/service/handler_util.h"

namespace dualswarm::coord {

grpc::Status CampaignServiceImpl::Create(grpc::ServerContext* ctx, const v1::CreateCampaignRequest* req,
                                         v1::Campaign* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  const v1::Campaign& p = req->campaign();
  if (p.cron().size() > 1000) return Invalid("cron exceeds 1000 bytes");
  if (auto st = CheckId("campaign.template.target_id", p.template_().target_id()); !st.ok()) return st;
  return ReplyWith(state_->store()->CreateCampaign(CampaignFromProto(p), NowMicros()), CampaignToProto, resp);
}

grpc::Status CampaignServiceImpl::List(grpc::ServerContext* ctx, const v1::ListCampaignsRequest* req,
                                       v1::ListCampaignsResponse* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
  return ReplyWithPage(state_->store()->ListCampaigns(PageOf(req->page_size(), req->page_token())), CampaignToProto,
                       resp->mutable_campaigns(), resp->mutable_next_page_token());
}

grpc::Status CampaignServiceImpl::Get(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Campaign* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  return ReplyWithIdOrName(state_->store(), &Store::GetCampaign, &Store::GetCampaignByName, req->id(), req->name(),
                           CampaignToProto, resp);
}

grpc::Status CampaignServiceImpl::Pause(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                                        v1::Campaign* resp) {
  return SetPaused(ctx, req, true, resp);
}

grpc::Status CampaignServiceImpl::Resume(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                                         v1::Campaign* resp) {
  return SetPaused(ctx, req, false, resp);
}

grpc::Status CampaignServiceImpl::Delete(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                                         v1::DeleteCampaignResponse*) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  auto id = Resolve(req->id(), req->name());
  if (!id.ok()) return ToGrpc(id.status());
  return ToGrpc(state_->store()->DeleteCampaign(*id));
}

grpc::Status CampaignServiceImpl::ListRuns(grpc::ServerContext* ctx, const v1::ListCampaignRunsRequest* req,
                                           v1::ListCampaignRunsResponse* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  if (auto st = CheckPageSize(req->page_size()); !st.ok()) return st;
  auto id = Resolve(req->id(), req->name());
  if (!id.ok()) return ToGrpc(id.status());
  return ReplyWithPage(state_->store()->ListCampaignRuns(*id, PageOf(req->page_size(), req->page_token())),
                       CampaignRunToProto, resp->mutable_runs(), resp->mutable_next_page_token());
}

absl::StatusOr<int64_t> CampaignServiceImpl::Resolve(int64_t id, const std::string& name) {
  if (auto st = CheckIdOrName(id, name); !st.ok()) return st;
  if (id != 0) return id;
  auto row = state_->store()->GetCampaignByName(name);
  if (!row.ok()) return row.status();
  return row->id;
}

grpc::Status CampaignServiceImpl::SetPaused(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, bool paused,
                                            v1::Campaign* resp) {
  if (auto st = state_->auth().Admit(ctx); !st.ok()) return st;
  auto id = Resolve(req->id(), req->name());
  if (!id.ok()) return ToGrpc(id.status());
  return ReplyWith(state_->store()->SetCampaignPaused(*id, paused, NowMicros()), CampaignToProto, resp);
}

}  // namespace dualswarm::coord
